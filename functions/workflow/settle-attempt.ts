/** State machine task SettleAttempt: classifies a failed attempt and decides on another. */
import { settleFailedAttempt, type TaskError } from '#core/attempts';
import type { InvocationRef, StepVerdict } from './definition';

export async function handler(event: InvocationRef & { error?: TaskError }): Promise<StepVerdict> {
  return { retry: await settleFailedAttempt(event.organization_id, event.invocation_key, event.error ?? {}) };
}
