/** State machine task RecordOutcome: the invocation's final status, message and audit event. */
import { finishInvocation, type TaskError } from '#core/attempts';
import type { InvocationRef } from './definition';

export async function handler(event: InvocationRef & { error?: TaskError }): Promise<Record<string, never>> {
  await finishInvocation(event.organization_id, event.invocation_key, event.error);
  return {};
}
