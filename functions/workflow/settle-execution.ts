/**
 * Target of the execution status changes of the invocation state machine (an EventBridge
 * rule on AWS, the local Step Functions locally): an execution that ended without
 * RecordOutcome having run (stopped, failed past the definition's catches, timed out, its
 * history exhausted) still ends its invocation FAILED `interrupted` and releases the session.
 */
import { z } from 'zod';
import { interruptInvocation } from '#core/attempts';
import { attemptStore } from '#functions/stores';
import { createLogger } from '#kit/log';
import { EXECUTION_STATUS_CHANGE, UNSETTLED_EXECUTION_STATUSES } from './definition';

const executionInput = z.object({ organization_id: z.string().min(1), invocation_key: z.string().min(1) });

const statusChange = z.object({
  source: z.literal('aws.states'),
  'detail-type': z.literal(EXECUTION_STATUS_CHANGE),
  detail: z.object({
    executionArn: z.string(),
    status: z.string(),
    input: z.string().nullish(),
    error: z.string().nullish(),
  }),
});

/** Why the invocation ended, for its failure message. */
function reason(status: string, error: string | null | undefined): string {
  if (status === 'ABORTED') return 'the execution was stopped';
  if (status === 'TIMED_OUT') return 'the execution timed out';
  return `the execution failed${error ? ` (${error})` : ''}`;
}

function parseInput(text: string | null | undefined) {
  try {
    return executionInput.safeParse(JSON.parse(text ?? ''));
  } catch {
    return executionInput.safeParse(undefined);
  }
}

export async function handler(event: unknown): Promise<{ settled: boolean }> {
  const log = createLogger({ source: 'settle-execution' });
  const change = statusChange.safeParse(event);
  if (!change.success) {
    log.warn('ignored an event that is no execution status change');
    return { settled: false };
  }
  const { status, input, error, executionArn } = change.data.detail;
  if (!(UNSETTLED_EXECUTION_STATUSES as readonly string[]).includes(status)) return { settled: false };
  const ids = parseInput(input);
  if (!ids.success) {
    log.warn('ignored an execution whose input names no invocation', { execution_arn: executionArn });
    return { settled: false };
  }
  const { organization_id: organizationId, invocation_key: invocationKey } = ids.data;
  const settled = await interruptInvocation(attemptStore(organizationId), invocationKey, reason(status, error));
  if (settled) log.info('settled an invocation its execution left running', { organization_id: organizationId, invocation_key: invocationKey, status });
  return { settled };
}
