/** GET /agents/{name}: an agent's current revision and its revisions, newest first. */
import { getAgentOperation } from '#contracts/agents';
import { readAgent } from '#core/agents';
import { agentStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getAgentOperation, async ({ principal, params }) => ({
  status: 200,
  body: await readAgent(agentStore(principal.organizationId), params.name),
}));
