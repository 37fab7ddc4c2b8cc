/** GET /sessions/{id}: the session and its messages by cursor. */
import { getSessionOperation } from '#contracts/sessions';
import { readSession } from '#core/sessions';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getSessionOperation, async ({ principal, params, query }) => ({
  status: 200,
  body: await readSession(principal.organizationId, params.id, query.after ?? 0, query.limit),
}));
