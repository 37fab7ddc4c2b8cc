/** The session store of one organization over the table and the bucket (`core/sessions.ts` declares it). */
import type { SessionStore } from '#core/sessions';
import { listAuditEvents } from './audit';
import { cursorKey } from './cursor-key';
import { deleteInvocationRecords, deleteSessionRecords, getInvocation, getSession, listSessionInvocationKeys, listSessions } from './invocations';
import { getMessage, listMessages } from './messages';
import { deleteInvocationObjects } from './payloads';

/** The sessions of `organizationId`. */
export function sessionStore(organizationId: string): SessionStore {
  return {
    organizationId,
    cursorKey,
    session: (sessionId) => getSession(organizationId, sessionId),
    sessions: (limit, after) => listSessions(organizationId, limit, after),
    invocation: (invocationKey) => getInvocation(organizationId, invocationKey),
    message: (sessionId, cursor) => getMessage(organizationId, sessionId, cursor),
    messages: (sessionId, after, limit) => listMessages(organizationId, sessionId, after, limit),
    auditEvents: (sessionId, afterSk, limit) => listAuditEvents(organizationId, sessionId, afterSk, limit),
    invocationKeys: (sessionId) => listSessionInvocationKeys(organizationId, sessionId),
    deleteInvocation: async (invocationKey) => {
      await deleteInvocationObjects(organizationId, invocationKey);
      await deleteInvocationRecords(organizationId, invocationKey);
    },
    deleteSession: (sessionId) => deleteSessionRecords(organizationId, sessionId),
  };
}
