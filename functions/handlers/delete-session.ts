/** DELETE /sessions/{id}: stops a running invocation, then deletes the session and everything it recorded. */
import { SessionIdParams } from '#contracts/sessions';
import { deleteSession } from '#core/sessions';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('DELETE /sessions/{id}'),
  { params: SessionIdParams },
  async ({ principal, params }) => {
    await deleteSession(principal.organizationId, params.id);
    return { status: 204 };
  },
);
