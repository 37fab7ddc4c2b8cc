/** GET /agents/{name}/revisions/{revision}: one revision with its configuration. */
import { getRevisionOperation } from '#contracts/agents';
import { readRevision } from '#core/agents';
import { agentStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getRevisionOperation, async ({ principal, params }) => ({
  status: 200,
  body: await readRevision(agentStore(principal.organizationId), params.name, params.revision),
}));
