/** The audit log of a session, read in event time order (its items are written with the events they record). */
import { queryPage } from './dynamo';
import type { AuditEventInput } from './invocations';
import { keys } from './keys';

export interface AuditEvent {
  id: string;
  session_id: string;
  invocation_key: string;
  type: AuditEventInput['type'];
  payload: Record<string, unknown>;
  event_time: string;
  agent_revision: string;
}

const toEvent = ({ id, session_id, invocation_key, event_type, payload, event_time, agent_revision }: Record<string, unknown>) =>
  ({ id, session_id, invocation_key, type: event_type, payload, event_time, agent_revision }) as AuditEvent;

/** Up to `limit` audit events after the event whose sort key is `afterSk`, oldest first, and the sort key to continue after. */
export async function listAuditEvents(
  organizationId: string,
  sessionId: string,
  afterSk: string | undefined,
  limit: number,
): Promise<{ events: AuditEvent[]; nextSk?: string }> {
  const { pk, skPrefix } = keys.auditOf(organizationId, sessionId);
  const { items, more } = await queryPage(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      ConsistentRead: true,
    },
    limit,
    afterSk ? { pk, sk: afterSk } : undefined,
  );
  const last = items.at(-1);
  return { events: items.map(toEvent), ...(more && last ? { nextSk: last.sk as string } : {}) };
}
