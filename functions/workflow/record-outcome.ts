/** State machine task RecordOutcome: the invocation's final status, message and audit event. */
import { finishInvocation } from '#core/attempts';
import { attemptStore } from '#functions/stores';
import type { TaskEvent } from './definition';

export async function handler(event: TaskEvent): Promise<Record<string, never>> {
  await finishInvocation(attemptStore(event.organization_id), event.invocation_key, event.error);
  return {};
}
