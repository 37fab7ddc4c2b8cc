/** GET /traces/{invocation_key}: an invocation's trace, a page of spans at a time by signed cursor. */
import { GetTraceParams, GetTraceQuery } from '#contracts/traces';
import { readTrace } from '#core/traces';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /traces/{invocation_key}'),
  { params: GetTraceParams, query: GetTraceQuery },
  async ({ principal, params, query }) => ({
    status: 200,
    body: await readTrace(principal.organizationId, params.invocation_key, query),
  }),
);
