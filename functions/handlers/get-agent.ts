/** GET /agents/{name}: an agent's current revision and its revisions, newest first. */
import { AgentNameParams } from '#contracts/agents';
import { readAgent } from '#core/agents';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /agents/{name}'), { params: AgentNameParams }, async ({ principal, params }) => ({
  status: 200,
  body: await readAgent(principal.organizationId, params.name),
}));
