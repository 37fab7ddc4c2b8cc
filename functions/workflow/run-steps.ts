/** State machine task RunSteps: one slice of the open attempt (see core/run-attempt). */
import type { Context } from 'aws-lambda';
import { config } from '#core/config';
import { createLogger } from '#core/log';
import { runAttemptSlice } from '#core/run-attempt';
import type { InvocationRef, StepVerdict } from './definition';

// Time kept back from the function's own timeout to write the last checkpoint and answer.
const SAFETY_MARGIN_MS = 5_000;

export async function handler(event: InvocationRef, context: Context): Promise<StepVerdict> {
  const budgetMs = Math.min(context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS, config.attemptTimeoutSeconds * 1000);
  const log = createLogger({ invocation_key: event.invocation_key, organization_id: event.organization_id, request_id: context.awsRequestId });
  const state = await runAttemptSlice(event.organization_id, event.invocation_key, budgetMs, new AbortController().signal, log);
  return { state };
}
