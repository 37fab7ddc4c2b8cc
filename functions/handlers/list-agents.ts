/** GET /agents: the organization's agent names, by name. */
import { listAgentsOperation } from '#contracts/agents';
import { stores } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listAgentsOperation, async ({ principal }) => ({
  status: 200,
  body: { agents: await stores.agents(principal.organizationId).list() },
}));
