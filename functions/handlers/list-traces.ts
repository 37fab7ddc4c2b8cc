/** GET /traces: the organization's invocations newest first, filtered, by signed cursor. */
import { listTracesOperation } from '#contracts/traces';
import { searchTraces } from '#core/traces';
import { traceStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listTracesOperation, async ({ principal, query }) => ({
  status: 200,
  body: await searchTraces(traceStore(principal.organizationId), query),
}));
