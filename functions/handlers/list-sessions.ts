/** GET /sessions: the organization's sessions, newest first, by signed cursor. */
import { listSessionsOperation } from '#contracts/sessions';
import { readSessions } from '#core/sessions';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listSessionsOperation, async ({ principal, query }) => ({
  status: 200,
  body: await readSessions(principal.organizationId, query.after, query.limit),
}));
