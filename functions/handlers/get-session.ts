/** GET /sessions/{id}: the session and its messages by cursor. */
import { GetSessionQuery, SessionIdParams } from '#contracts/sessions';
import { readSession } from '#core/sessions';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /sessions/{id}'),
  { params: SessionIdParams, query: GetSessionQuery },
  async ({ principal, params, query }) => ({
    status: 200,
    body: await readSession(principal.organizationId, params.id, query.after ?? 0, query.limit),
  }),
);
