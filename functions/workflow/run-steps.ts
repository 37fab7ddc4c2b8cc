/** State machine task RunSteps: one slice of an attempt, opening it first when it is new (see core/run-attempt). */
import type { Context } from 'aws-lambda';
import { checkHealth } from '#core/health';
import { createLogger } from '#kit/log';
import { runAttemptSlice } from '#core/run-attempt';
import { healthProbes, sliceStore } from '#functions/stores';
import type { StepVerdict, TaskEvent } from './definition';

// Init primes the table and bucket clients with the health check's two reads (failures
// ignored: the role may not hold HeadBucket), so their first request's set-up (connection,
// credentials, the SDK's lazily built middleware) is paid here and not by the first slice.
// Environments initialized ahead of need (provisioned concurrency, the local cloud's warm
// pool) thus run their first slice as fast as later ones.
await checkHealth(healthProbes);

// Time kept back from the function's own timeout to write the last checkpoint and answer.
const SAFETY_MARGIN_MS = 5_000;

export async function handler(event: TaskEvent, context: Context): Promise<StepVerdict> {
  const { result, error: _error, ...input } = event;
  const step = result?.step;
  // After `continue` the same attempt goes on; first, and after a retry, the next one opens.
  const attempt = step?.state === 'continue' && step.attempt ? { resume: step.attempt } : { after: step?.attempt ?? 0 };
  const budgetMs = Math.max(0, context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS);
  const log = createLogger({ invocation_key: event.invocation_key, organization_id: event.organization_id, request_id: context.awsRequestId });
  return runAttemptSlice(sliceStore(event.organization_id), { ...input, ...attempt }, budgetMs, log);
}
