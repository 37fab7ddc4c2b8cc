/** DELETE /sessions/{id}: stops a running invocation, then deletes the session and everything it recorded. */
import { deleteSessionOperation } from '#contracts/sessions';
import { deleteSession } from '#core/sessions';
import { attemptStore, runEngine, sessionStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteSessionOperation, async ({ principal, params }) => {
  const { organizationId } = principal;
  await deleteSession({ attempts: attemptStore(organizationId), sessions: sessionStore(organizationId), engine: runEngine(organizationId) }, params.id);
  return { status: 204 };
});
