/** State machine task RunSteps: one slice of the open attempt (see core/run-attempt). */
import type { Context } from 'aws-lambda';
import { createLogger } from '#core/log';
import { runAttemptSlice } from '#core/run-attempt';
import type { StepVerdict, TaskEvent } from './definition';

// Time kept back from the function's own timeout to write the last checkpoint and answer.
const SAFETY_MARGIN_MS = 5_000;

export async function handler(event: TaskEvent, context: Context): Promise<StepVerdict> {
  const step = event.result?.step;
  if (!step?.attempt) throw new Error('RunSteps needs the open attempt in $.result.step.attempt');
  const budgetMs = Math.max(0, context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS);
  const log = createLogger({ invocation_key: event.invocation_key, organization_id: event.organization_id, request_id: context.awsRequestId });
  const { result: _result, error: _error, ...input } = event;
  const state = await runAttemptSlice({ ...input, attempt: step.attempt, resume: step.state === 'continue' }, budgetMs, log);
  return { attempt: step.attempt, state };
}
