/** State machine task StartAttempt: opens the invocation's next attempt. */
import { startNextAttempt } from '#core/attempts';
import type { StepVerdict, TaskEvent } from './definition';

export async function handler(event: TaskEvent): Promise<StepVerdict> {
  const after = event.result?.step?.attempt ?? 0;
  return { attempt: await startNextAttempt(event.organization_id, event.invocation_key, { invocation: event, after }) };
}
