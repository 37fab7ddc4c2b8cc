/** GET /agents/{name}/revisions/{revision}: one revision with its configuration. */
import { AgentRevisionParams } from '#contracts/agents';
import { readRevision } from '#core/agents';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /agents/{name}/revisions/{revision}'),
  { params: AgentRevisionParams },
  async ({ principal, params }) => ({
    status: 200,
    body: await readRevision(principal.organizationId, params.name, params.revision),
  }),
);
