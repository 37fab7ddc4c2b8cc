/** The audit log of a session, read in event time order (its items are written with the events they record). */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#core/config';
import { dynamo } from './dynamo';
import { keys } from './keys';

export interface AuditEvent {
  id: string;
  session_id: string;
  invocation_key: string;
  type: string;
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
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined = afterSk ? { pk, sk: afterSk } : undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        // One extra tells whether another page exists.
        Limit: limit + 1 - items.length,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && items.length <= limit);
  const shown = items.slice(0, limit);
  const last = shown.at(-1);
  return { events: shown.map(toEvent), ...(items.length > limit && last ? { nextSk: last.sk as string } : {}) };
}
