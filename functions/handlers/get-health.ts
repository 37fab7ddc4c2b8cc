/** GET /health: 200 when the table and the payload bucket answer, else 503. */
import { healthOperation } from '#contracts/identity';
import { defineHandler } from '#http/handler';
import { checkHealth } from '#core/health';
import { healthProbes } from '#functions/stores';

export const handler = defineHandler(healthOperation, async ({ log }) => {
  const problem = await checkHealth(healthProbes, log);
  if (problem) return { status: 503, body: { message: problem, status: 'unavailable' as const } };
  return { status: 200, body: { status: 'ok' as const } };
});
