/** GET /sessions/{id}: the session and its messages by cursor. */
import { getSessionOperation } from '#contracts/sessions';
import { readSession } from '#core/sessions';
import { sessionStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getSessionOperation, async ({ principal, params, query }) => ({
  status: 200,
  body: await readSession(sessionStore(principal.organizationId), params.id, query.after ?? 0, query.limit),
}));
