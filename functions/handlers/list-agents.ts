/** GET /agents: the organization's agent names, by name. */
import { listAgents } from '#data/agents';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /agents'), {}, async ({ principal }) => ({
  status: 200,
  body: { agents: await listAgents(principal.organizationId) },
}));
