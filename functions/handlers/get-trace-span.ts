/** GET /traces/{invocation_key}/spans/{span_id}: one span with its payloads. */
import { getSpanOperation } from '#contracts/traces';
import { readSpan } from '#core/traces';
import { traceStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getSpanOperation, async ({ principal, params }) => ({
  status: 200,
  body: await readSpan(traceStore(principal.organizationId), params.invocation_key, params.span_id),
}));
