/** GET /agents: the organization's agent names, by name. */
import { listAgentsOperation } from '#contracts/agents';
import { agentStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listAgentsOperation, async ({ principal }) => ({
  status: 200,
  body: { agents: await agentStore(principal.organizationId).list() },
}));
