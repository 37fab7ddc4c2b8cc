/**
 * Seeding traces straight through the data layer, for tests and benchmarks that need
 * hundreds of spans or thousands of invocations faster than runs would make them. Items
 * take the shape the service writes (spans.ts, acceptInvocation), keyed by `keys`.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import { sha256 } from '#kit/ids';
import { spansExpireAt } from '#kit/retention';
import { dynamo } from '#data/dynamo';
import type { Invocation } from '#core/model';
import { keys } from '#data/keys';
import { payloadKey, putJson } from '#data/payloads';

// BatchWriteItem takes at most 25 requests.
const BATCH = 25;
// Writes in flight at once while seeding.
const PARALLEL = 8;

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** Puts items with BatchWrite, sending again whatever DynamoDB leaves unprocessed. */
export async function batchPut(items: Record<string, unknown>[]): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));
  await inParallel(batches, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    while (requests.length) {
      const { UnprocessedItems } = await dynamo.send(new BatchWriteCommand({ RequestItems: { [config.tableName]: requests } }));
      requests = (UnprocessedItems?.[config.tableName] ?? []) as typeof requests;
    }
  });
}

/** An invocation item as acceptance (and, with an outcome, recordOutcome) leaves it, with its trace index entries. */
export function invocationItem(organizationId: string, invocation: Invocation): Record<string, unknown> {
  return {
    ...keys.invocation(organizationId, invocation.invocation_key),
    type: 'Invocation',
    ...invocation,
    ...keys.traceListing(organizationId, invocation),
  };
}

/** An attempt item as an attempt that succeeded leaves it. */
export function attemptItem(organizationId: string, invocation: Invocation, number: number): Record<string, unknown> {
  return {
    ...keys.attempt(organizationId, invocation.invocation_key, number),
    type: 'Attempt',
    number,
    status: 'SUCCEEDED',
    started_at: invocation.started_at,
    ended_at: invocation.ended_at ?? invocation.started_at,
    usage: { input_tokens: 0, output_tokens: 0 },
    steps: 0,
    answer: '',
    expires_at: spansExpireAt(invocation.started_at),
  };
}

/** A session item holding `count` invocations, idle (enough for lookups by id). */
export function sessionItem(organizationId: string, sessionId: string, count: number, at: string): Record<string, unknown> {
  return {
    ...keys.session(organizationId, sessionId),
    type: 'Session',
    id: sessionId,
    state: 'IDLE',
    invocation_count: count,
    message_count: 0,
    created_at: at,
    updated_at: at,
    ...keys.sessionListing(organizationId, at, sessionId),
  };
}

export interface SeededSpans {
  /** Span ids in the order they were written (oldest first). */
  ids: string[];
}

/**
 * Writes `count` ended spans of one attempt: model calls with a tool call after each
 * (`inv-<position>.att-<attempt>.<seq>`), and, unless `payloads` is false, an input and an
 * output payload of about `payloadBytes` each. Returns their ids in order.
 */
export async function seedSpans(
  organizationId: string,
  invocation: Invocation,
  options: { attempt: number; count: number; payloads?: boolean; payloadBytes?: number; firstSeq?: number },
): Promise<SeededSpans> {
  const { attempt, count } = options;
  const first = options.firstSeq ?? 1;
  const expiresAt = spansExpireAt(invocation.started_at);
  const filler = 'x'.repeat(Math.max(0, (options.payloadBytes ?? 200) - 40));
  const base = Date.parse(invocation.started_at);
  const spans = Array.from({ length: count }, (_, i) => {
    const seq = first + i;
    const id = `inv-${invocation.session_position}.att-${attempt}.${seq}`;
    const model = seq % 2 === 1;
    const input = JSON.stringify({ seq, side: 'input', filler });
    const output = JSON.stringify({ seq, side: 'output', filler });
    return {
      id,
      input,
      output,
      item: {
        ...keys.span(organizationId, invocation.invocation_key, attempt, seq),
        type: 'Span',
        id,
        span_type: model ? 'model_call' : 'tool_call',
        name: model ? 'gpt-seed' : 'lookup',
        parent_id: model ? null : `inv-${invocation.session_position}.att-${attempt}.${seq - 1}`,
        attempt,
        status: 'SUCCEEDED',
        started_at: new Date(base + seq).toISOString(),
        ended_at: new Date(base + seq + 1).toISOString(),
        usage: model ? { input_tokens: 10, output_tokens: 2 } : null,
        input_bytes: Buffer.byteLength(input),
        input_sha256: sha256(input),
        output_bytes: Buffer.byteLength(output),
        output_sha256: sha256(output),
        expires_at: expiresAt,
      },
    };
  });
  if (options.payloads !== false) {
    const objects = spans.flatMap((span) => [
      { key: payloadKey(organizationId, invocation.invocation_key, span.id, 'input'), body: span.input },
      { key: payloadKey(organizationId, invocation.invocation_key, span.id, 'output'), body: span.output },
    ]);
    await inParallel(objects, ({ key, body }) => putJson(key, body));
  }
  await batchPut(spans.map((span) => span.item));
  return { ids: spans.map((span) => span.id) };
}
