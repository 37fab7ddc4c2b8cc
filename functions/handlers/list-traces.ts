/** GET /traces: the organization's invocations newest first, filtered, by signed cursor. */
import { ListTracesQuery } from '#contracts/traces';
import { searchTraces } from '#core/traces';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /traces'),
  { query: ListTracesQuery },
  async ({ principal, query }) => ({
    status: 200,
    body: await searchTraces(principal.organizationId, query),
  }),
);
