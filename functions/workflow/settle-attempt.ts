/** State machine task SettleAttempt: classifies a failed attempt and decides on another. */
import { settleFailedAttempt } from '#core/attempts';
import { attemptStore } from '#functions/stores';
import type { StepVerdict, TaskEvent } from './definition';

export async function handler(event: TaskEvent): Promise<StepVerdict> {
  return settleFailedAttempt(attemptStore(event.organization_id), event.invocation_key, event.error ?? {});
}
