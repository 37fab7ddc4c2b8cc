/** GET /traces/{invocation_key}/events: an invocation's events after a cursor, long-polling up to `wait_seconds`. */
import { traceEventsOperation } from '#contracts/traces';
import { readEvents } from '#core/events';
import { eventStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(traceEventsOperation, async ({ principal, params, query }) => ({
  status: 200,
  body: await readEvents(eventStore(principal.organizationId), params.invocation_key, {
    ...(query.after ? { after: query.after } : {}),
    limit: query.limit,
    waitSeconds: query.wait_seconds,
  }),
}));
