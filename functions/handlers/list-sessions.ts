/** GET /sessions: the organization's sessions, newest first, by signed cursor. */
import { ListSessionsQuery } from '#contracts/sessions';
import { readSessions } from '#core/sessions';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /sessions'),
  { query: ListSessionsQuery },
  async ({ principal, query }) => ({
    status: 200,
    body: await readSessions(principal.organizationId, query.after, query.limit),
  }),
);
