/** GET /agents: the organization's agent names, by name. */
import { listAgentsOperation } from '#contracts/agents';
import { listAgents } from '#data/agents';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listAgentsOperation, async ({ principal }) => ({
  status: 200,
  body: { agents: await listAgents(principal.organizationId) },
}));
