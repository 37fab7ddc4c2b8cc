/** GET /traces: the organization's invocations newest first, filtered, by signed cursor. */
import { listTracesOperation } from '#contracts/traces';
import { searchTraces } from '#core/traces';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listTracesOperation, async ({ principal, query }) => ({
  status: 200,
  body: await searchTraces(principal.organizationId, query),
}));
