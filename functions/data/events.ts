/** What following an invocation reads, for one organization (`core/events.ts` declares the store). */
import type { EventStore } from '#core/events';
import { listAttempts } from './attempts';
import { cursorKey } from './cursor-key';
import { getInvocation } from './invocations';
import { getMessage } from './messages';
import { spansFrom } from './traces';

/** The events of `organizationId`'s invocations. */
export function eventStore(organizationId: string): EventStore {
  return {
    organizationId,
    cursorKey,
    invocation: (invocationKey) => getInvocation(organizationId, invocationKey),
    attempts: (invocationKey) => listAttempts(organizationId, invocationKey),
    spansFrom: (invocationKey, attempt, seq, limit) => spansFrom(organizationId, invocationKey, attempt, seq, limit),
    message: (sessionId, cursor) => getMessage(organizationId, sessionId, cursor),
  };
}
