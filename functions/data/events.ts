/** What following an invocation reads, for one organization (`core/events.ts` declares the store). */
import { z } from 'zod';
import type { EventStore } from '#core/events';
import type { RecordedSpan } from '#core/model';
import { usageSchema, listAttempts } from './attempts';
import { cursorKey } from './cursor-key';
import { queryPage } from './dynamo';
import { entity } from './entity';
import { getInvocation } from './invocations';
import { keys } from './keys';
import { getMessage } from './messages';

/** A span item's metadata; its sort key gives its position within the attempt. */
const spanEntity = entity('Span', z.object({
  id: z.string(),
  span_type: z.enum(['model_call', 'tool_call']),
  name: z.string(),
  parent_id: z.string().nullable(),
  attempt: z.number(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']),
  started_at: z.string(),
  ended_at: z.string().optional(),
  usage: usageSchema.nullable(),
  sk: z.string(),
}));

function recordedSpan(item: Record<string, unknown>): RecordedSpan {
  const { span_type, sk, ...span } = spanEntity.parse(item);
  return { ...span, type: span_type, seq: Number(sk.slice(sk.lastIndexOf('#') + 1)) };
}

// Attempt numbers and sequences are zero-padded to 3 and 6 digits in the sort key.
const LAST_ATTEMPT = 999;
const LAST_SEQ = 999_999;

/** Up to `limit` spans from span `seq` of attempt `attempt` on, oldest first, read consistently. */
async function spansFrom(organizationId: string, invocationKey: string, attempt: number, seq: number, limit: number) {
  const { pk } = keys.spansOf(organizationId, invocationKey);
  const { items, more } = await queryPage(
    {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': pk,
        ':from': keys.span(organizationId, invocationKey, attempt, Math.min(seq, LAST_SEQ)).sk,
        ':to': keys.span(organizationId, invocationKey, LAST_ATTEMPT, LAST_SEQ).sk,
      },
      ConsistentRead: true,
    },
    limit,
  );
  return { spans: items.map(recordedSpan), more };
}

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
