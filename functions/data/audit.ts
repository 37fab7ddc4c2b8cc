/** The audit log of a session, read in event time order (its items are written with the events they record). */
import { z } from 'zod';
import type { AuditEvent } from '#core/model';
import { queryPage } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';

/** An audit item: the event, its type stored as `event_type` (`type` names the item type), and its sort key. */
const auditEntity = entity('AuditEvent', z.object({
  id: z.string(),
  session_id: z.string(),
  invocation_key: z.string(),
  event_type: z.enum(['agent_invocation', 'llm_call', 'tool_result', 'memory_written', 'run_succeeded', 'run_failed']),
  payload: z.record(z.string(), z.unknown()),
  event_time: z.string(),
  agent_revision: z.string(),
  sk: z.string(),
}));

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
  const events = items.map(auditEntity.parse);
  const last = events.at(-1);
  return {
    events: events.map(({ id, session_id, invocation_key, event_type, payload, event_time, agent_revision }) => (
      { id, session_id, invocation_key, type: event_type, payload, event_time, agent_revision }
    )),
    ...(more && last ? { nextSk: last.sk } : {}),
  };
}
