/** GET /health: 200 when the table and the payload bucket answer, else 503. */
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';
import { checkHealth } from '#core/health';

export const handler = defineHandler(routeOf('GET /health'), {}, async ({ log }) => {
  const problem = await checkHealth(log);
  if (problem) return { status: 503, body: { message: problem, status: 'unavailable' } };
  return { status: 200, body: { status: 'ok' } };
});
