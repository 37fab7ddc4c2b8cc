/** Attempts of an invocation: each run of the harness, with its own outcome and usage. */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import { cancellationReasons, dynamo, isConditionFailure, queryPrefix, transactWrite, whileRunning } from './dynamo';
import { spansExpireAt } from '#kit/retention';
import { deliveryStarter } from './outbound';
import { failureSchema, getInvocation, getSession, recordOutcome, runningInvocation } from './invocations';
import type { Attempt, Failure, Invocation, Usage } from '#core/model';
import type { AttemptStore } from '#core/attempts';
import { entity } from './entity';
import { keys } from './keys';

export const usageSchema = z.object({ input_tokens: z.number(), output_tokens: z.number() }) satisfies z.ZodType<Usage>;

const attemptEntity = entity('Attempt', z.object({
  number: z.number(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']),
  started_at: z.string(),
  ended_at: z.string().optional(),
  usage: usageSchema,
  failure: failureSchema.optional(),
  steps: z.number(),
  answer: z.string().optional(),
}) satisfies z.ZodType<Attempt>);

/** Attempts of an invocation, oldest first, read consistently. */
export async function listAttempts(organizationId: string, invocationKey: string): Promise<Attempt[]> {
  return (await queryPrefix(keys.attemptsOf(organizationId, invocationKey), { consistent: true })).map(attemptEntity.parse);
}

/**
 * Opens attempt `number` as RUNNING, expiring with its invocation's spans, while the
 * invocation runs: `opened`, `exists` when that number exists already (the task ran
 * twice, or the execution started over), `ended` when the invocation is no longer RUNNING.
 */
export async function putAttempt(
  organizationId: string,
  invocation: Pick<Invocation, 'invocation_key' | 'started_at'>,
  number: number,
  startedAt: string,
): Promise<'opened' | 'exists' | 'ended'> {
  const attempt: Attempt = { number, status: 'RUNNING', started_at: startedAt, usage: { input_tokens: 0, output_tokens: 0 }, steps: 0 };
  try {
    await transactWrite({
      TransactItems: [
        { ConditionCheck: runningInvocation(organizationId, invocation.invocation_key) },
        {
          Put: {
            TableName: config.tableName,
            Item: {
              ...keys.attempt(organizationId, invocation.invocation_key, number),
              type: 'Attempt',
              ...attempt,
              expires_at: spansExpireAt(invocation.started_at),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    });
    return 'opened';
  } catch (error) {
    const [invocationCheck, attemptCheck] = cancellationReasons(error) ?? [];
    if (invocationCheck?.code === 'ConditionalCheckFailed') return 'ended';
    if (attemptCheck?.code === 'ConditionalCheckFailed') return 'exists';
    throw error;
  }
}

/** The condition that an attempt is still RUNNING. */
export function runningAttempt(organizationId: string, invocationKey: string, number: number) {
  return whileRunning({ TableName: config.tableName, Key: keys.attempt(organizationId, invocationKey, number) });
}

/** The update that stamps a running attempt's progress (steps and usage so far); holds only while it runs. */
export function progressUpdate(organizationId: string, invocationKey: string, number: number, progress: { steps: number; usage: Usage }) {
  return whileRunning({
    TableName: config.tableName,
    Key: keys.attempt(organizationId, invocationKey, number),
    UpdateExpression: 'SET steps = :steps, #usage = :usage',
    ExpressionAttributeNames: { '#usage': 'usage' },
    ExpressionAttributeValues: { ':steps': progress.steps, ':usage': progress.usage },
  });
}

/** The update that ends a running attempt successfully with its final progress and answer. */
export function successUpdate(organizationId: string, invocationKey: string, number: number, final: { steps: number; usage: Usage; answer: string; ended_at: string }) {
  return whileRunning({
    TableName: config.tableName,
    Key: keys.attempt(organizationId, invocationKey, number),
    UpdateExpression: 'SET #status = :status, ended_at = :ended, answer = :answer, steps = :steps, #usage = :usage',
    ExpressionAttributeNames: { '#usage': 'usage' },
    ExpressionAttributeValues: { ':status': 'SUCCEEDED', ':ended': final.ended_at, ':answer': final.answer, ':steps': final.steps, ':usage': final.usage },
  });
}

/** Ends a running attempt; false when it had already ended. */
export async function endAttempt(
  organizationId: string,
  invocationKey: string,
  number: number,
  outcome: { status: 'SUCCEEDED'; answer: string; ended_at: string } | { status: 'FAILED'; failure: Failure; ended_at: string },
): Promise<boolean> {
  const detail = outcome.status === 'SUCCEEDED' ? { field: 'answer', value: outcome.answer } : { field: 'failure', value: outcome.failure };
  try {
    await dynamo.send(
      new UpdateCommand(
        whileRunning({
          TableName: config.tableName,
          Key: keys.attempt(organizationId, invocationKey, number),
          UpdateExpression: `SET #status = :status, ended_at = :ended, ${detail.field} = :detail`,
          ExpressionAttributeValues: { ':status': outcome.status, ':ended': outcome.ended_at, ':detail': detail.value },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** The attempts and outcome of `organizationId`'s invocations (`core/attempts.ts` declares the store). */
export function attemptStore(organizationId: string): AttemptStore {
  return {
    invocation: (invocationKey) => getInvocation(organizationId, invocationKey),
    session: (sessionId) => getSession(organizationId, sessionId),
    attempts: (invocationKey) => listAttempts(organizationId, invocationKey),
    openAttempt: (invocation, number, startedAt) => putAttempt(organizationId, invocation, number, startedAt),
    endAttempt: (invocationKey, number, outcome) => endAttempt(organizationId, invocationKey, number, outcome),
    recordOutcome: (outcome) => recordOutcome({ organizationId, ...outcome }),
    deliveries: deliveryStarter(organizationId),
  };
}
