/** POST /traces/{invocation_key}/cancel: ends a running invocation now; 409 when it ended otherwise. */
import { cancelTraceOperation } from '#contracts/traces';
import { cancelInvocation } from '#core/attempts';
import { traceSummary } from '#core/traces';
import { attemptStore, runEngine } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(cancelTraceOperation, async ({ principal, params }) => {
  const { organizationId } = principal;
  const { cancelled, invocation } = await cancelInvocation(attemptStore(organizationId), runEngine(organizationId), params.invocation_key);
  if (!cancelled) {
    return { status: 409, body: { message: `invocation ${params.invocation_key} already ended ${invocation.status}`, status: invocation.status } };
  }
  return { status: 200, body: { ...traceSummary(invocation), ...(invocation.failure ? { failure: invocation.failure } : {}) } };
});
