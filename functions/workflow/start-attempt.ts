/** State machine task StartAttempt: opens the invocation's next attempt. */
import { startNextAttempt } from '#core/attempts';
import type { InvocationRef } from './definition';

export async function handler(event: InvocationRef): Promise<{ attempt: number }> {
  return { attempt: await startNextAttempt(event.organization_id, event.invocation_key) };
}
