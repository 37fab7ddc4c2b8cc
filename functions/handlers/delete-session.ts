/** DELETE /sessions/{id}: stops a running invocation, then deletes the session and everything it recorded. */
import { deleteSessionOperation } from '#contracts/sessions';
import { deleteSession } from '#core/sessions';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteSessionOperation, async ({ principal, params }) => {
  await deleteSession(principal.organizationId, params.id);
  return { status: 204 };
});
