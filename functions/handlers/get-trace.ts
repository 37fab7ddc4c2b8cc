/** GET /traces/{invocation_key}: an invocation's trace, a page of spans at a time by signed cursor. */
import { getTraceOperation } from '#contracts/traces';
import { readTrace } from '#core/traces';
import { traceStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getTraceOperation, async ({ principal, params, query }) => ({
  status: 200,
  body: await readTrace(traceStore(principal.organizationId), params.invocation_key, query),
}));
