/** GET /sessions/{id}/audit: the session's audit log in event time order, by signed cursor. */
import { getAuditOperation } from '#contracts/sessions';
import { readAudit } from '#core/sessions';
import { sessionStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getAuditOperation, async ({ principal, params, query }) => ({
  status: 200,
  body: await readAudit(sessionStore(principal.organizationId), params.id, query.after, query.limit),
}));
