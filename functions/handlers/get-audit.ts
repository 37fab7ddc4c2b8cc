/** GET /sessions/{id}/audit: the session's audit log in event time order, by signed cursor. */
import { GetAuditQuery, SessionIdParams } from '#contracts/sessions';
import { readAudit } from '#core/sessions';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /sessions/{id}/audit'),
  { params: SessionIdParams, query: GetAuditQuery },
  async ({ principal, params, query }) => ({
    status: 200,
    body: await readAudit(principal.organizationId, params.id, query.after, query.limit),
  }),
);
