/** GET /sessions: the organization's sessions, newest first, by signed cursor. */
import { listSessionsOperation } from '#contracts/sessions';
import { readSessions } from '#core/sessions';
import { sessionStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listSessionsOperation, async ({ principal, query }) => ({
  status: 200,
  body: await readSessions(sessionStore(principal.organizationId), query.after, query.limit),
}));
