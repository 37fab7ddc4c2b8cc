/**
 * Reading traces: an invocation's spans a page at a time, their payloads, and the search
 * of an organization's invocations through the sparse trace indexes (`keys.traceListing`).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import { UnavailableError } from '#core/errors';
import type { RecordedSpan } from '#core/model';
import type { ListedInvocation, SearchPosition, SearchWindow, StoredSpan, TraceFilters, TraceStore } from '#core/traces';
import { listAttempts, usageSchema } from './attempts';
import { cursorKey } from './cursor-key';
import { dynamo, queryPage } from './dynamo';
import { entity } from './entity';
import { getInvocation, getSession, invocationSchema } from './invocations';
import { keys } from './keys';
import { getBytes, payloadKey } from './payloads';

/** A span item: metadata and its payloads' descriptors (the payloads live in the bucket). */
const spanEntity = entity('Span', z.object({
  id: z.string(),
  span_type: z.enum(['model_call', 'tool_call']),
  name: z.string(),
  parent_id: z.string().nullable().default(null),
  attempt: z.number(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']),
  started_at: z.string(),
  ended_at: z.string().optional(),
  usage: usageSchema.nullable().default(null),
  input_bytes: z.number().optional(),
  input_sha256: z.string().optional(),
  output_bytes: z.number().optional(),
  output_sha256: z.string().optional(),
  sk: z.string(),
}));

function storedSpan(item: Record<string, unknown>): StoredSpan {
  const { span_type, ...span } = spanEntity.parse(item);
  return { ...span, type: span_type };
}

/**
 * An invocation item as the trace indexes give it (they project every attribute), with the
 * keys a search continues from. Items written before acceptance required a name lack it.
 */
const listedInvocationEntity = entity('Invocation', invocationSchema
  .partial({ agent_name: true, agent_revision: true })
  .extend({ pk: z.string(), sk: z.string() }) satisfies z.ZodType<ListedInvocation>);

/** Where a search stopped in a trace index: the keys of its last item read, all strings in this table. */
const indexPositionEntity = entity('TraceIndexKey', z.record(z.string(), z.string()) satisfies z.ZodType<SearchPosition>);

// Attempt numbers and sequences are zero-padded to 3 and 6 digits in the sort key.
const LAST_ATTEMPT = 999;
const LAST_SEQ = 999_999;

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

/** Errors a retry may not see again: throttling, a server fault, a timeout or a lost connection. */
function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { $fault, code } = error as { $fault?: string; code?: string };
  return $fault === 'server' ||
    /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|TimeoutError/.test(error.name) ||
    (code !== undefined && CONNECTION_ERRORS.has(code));
}

/**
 * Up to `limit` spans of an invocation, oldest first, after the span whose sort key is
 * `afterSk`: of one attempt, or of all when `attempt` is undefined. `more` says whether
 * more are stored already. Read consistently, so a span is visible as soon as it is written.
 */
export async function listSpans(
  organizationId: string,
  invocationKey: string,
  attempt: number | undefined,
  afterSk: string | undefined,
  limit: number,
): Promise<{ spans: StoredSpan[]; more: boolean }> {
  const { pk } = keys.spansOf(organizationId, invocationKey);
  const from = keys.span(organizationId, invocationKey, attempt ?? 0, 0).sk;
  const to = keys.span(organizationId, invocationKey, attempt ?? LAST_ATTEMPT, LAST_SEQ).sk;
  // DynamoDB refuses a start key outside the key condition: such a position starts over.
  const start = afterSk && afterSk >= from && afterSk <= to ? { pk, sk: afterSk } : undefined;
  try {
    const { items, more } = await queryPage(
      {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
        ConsistentRead: true,
      },
      limit,
      start,
    );
    return { spans: items.map(storedSpan), more };
  } catch (error) {
    if (isTransient(error)) throw new UnavailableError('the trace spans could not be read; retry', 1);
    throw error;
  }
}

/**
 * Up to `limit` spans of an invocation from span `seq` of attempt `attempt` on (that one
 * included), oldest first, with their position within their attempt: what events derive from.
 */
export async function spansFrom(organizationId: string, invocationKey: string, attempt: number, seq: number, limit: number): Promise<{ spans: RecordedSpan[]; more: boolean }> {
  const { spans, more } = await listSpans(organizationId, invocationKey, undefined, keys.span(organizationId, invocationKey, attempt, seq - 1).sk, limit);
  return { spans: spans.map(({ sk, input_bytes: _i, input_sha256: _is, output_bytes: _o, output_sha256: _os, ...span }) => ({ ...span, seq: Number(sk.slice(sk.lastIndexOf('#') + 1)) })), more };
}

/**
 * One payload of a span, or only its first `firstBytes`; undefined when the bucket has no
 * such object. A bucket that cannot be read is UnavailableError, whatever the reason.
 */
export async function readPayload(
  organizationId: string,
  invocationKey: string,
  spanId: string,
  part: 'input' | 'output',
  firstBytes?: number,
): Promise<Uint8Array | undefined> {
  try {
    return await getBytes(payloadKey(organizationId, invocationKey, spanId, part), firstBytes);
  } catch {
    throw new UnavailableError('the span payloads could not be read; retry', 2);
  }
}

// Each read fetches up to 1 MB; a request reads at most this many before it answers a
// short page with a cursor, so a filter that rarely matches cannot run past the timeout.
const MAX_READS_PER_PAGE = 8;
// With a filter DynamoDB applies Limit before it: read in larger steps.
const FILTERED_READ = 200;

/**
 * Picks the index for a set of filters, the most selective one first (a session holds
 * few invocations, a revision belongs to one configuration, a name to one agent), and
 * turns the remaining filters into a filter expression over the projected item.
 */
function plan(organizationId: string, filters: TraceFilters) {
  const index = filters.session_id !== undefined
    ? keys.tracesBy(organizationId, { kind: 'session', value: filters.session_id })
    : filters.agent_revision !== undefined
      ? keys.tracesBy(organizationId, { kind: 'revision', value: filters.agent_revision })
      : filters.agent_name !== undefined
        ? keys.tracesBy(organizationId, { kind: 'agent', value: filters.agent_name })
        : filters.status !== undefined
          ? keys.tracesBy(organizationId, { kind: 'status', value: filters.status })
          : keys.tracesBy(organizationId, { kind: 'org' });
  const rest = (Object.entries(filters) as [keyof TraceFilters, string | undefined][]).filter(
    ([name, value]) => value !== undefined && `tr_${indexFilter[name]}` !== index.attribute,
  );
  return {
    index,
    filter: rest.length
      ? {
          FilterExpression: rest.map(([name]) => `#${name} = :${name}`).join(' AND '),
          ExpressionAttributeNames: Object.fromEntries(rest.map(([name]) => [`#${name}`, name])),
          ExpressionAttributeValues: Object.fromEntries(rest.map(([name, value]) => [`:${name}`, value])),
        }
      : undefined,
  };
}

const indexFilter = { agent_name: 'agent', agent_revision: 'revision', status: 'status', session_id: 'session' } as const;

/**
 * Up to `limit` invocations of an organization started within [since, until], newest
 * first, matching every filter, from `after` on; and the position to continue from when
 * more may follow. Reads pages until the page is full or the window is exhausted (or the
 * read budget is spent, which answers a short page with a position).
 */
async function searchInvocations(
  organizationId: string,
  filters: TraceFilters,
  window: SearchWindow,
  limit: number,
  after: SearchPosition | undefined,
): Promise<{ invocations: ListedInvocation[]; next?: SearchPosition }> {
  const { index, filter } = plan(organizationId, filters);
  const found: ReturnType<typeof listedInvocationEntity.parse>[] = [];
  let startKey: Record<string, unknown> | undefined = after;
  for (let read = 0; read < MAX_READS_PER_PAGE; read++) {
    const wanted = limit + 1 - found.length;
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.index,
        KeyConditionExpression: '#pk = :pk AND started_at BETWEEN :since AND :until',
        ExpressionAttributeNames: { '#pk': index.attribute, ...filter?.ExpressionAttributeNames },
        ExpressionAttributeValues: { ':pk': index.value, ':since': window.since, ':until': window.until, ...filter?.ExpressionAttributeValues },
        ...(filter ? { FilterExpression: filter.FilterExpression } : {}),
        ScanIndexForward: false,
        Limit: filter ? Math.max(wanted, FILTERED_READ) : wanted,
        ExclusiveStartKey: startKey,
      }),
    );
    found.push(...(page.Items ?? []).map(listedInvocationEntity.parse));
    startKey = page.LastEvaluatedKey;
    if (found.length > limit) {
      // Full, and one more is known to follow: continue after the last one returned.
      const last = found[limit - 1]!;
      return { invocations: found.slice(0, limit), next: { pk: last.pk, sk: last.sk, [index.attribute]: index.value, started_at: last.started_at } };
    }
    if (!startKey) return { invocations: found };
  }
  return { invocations: found, next: indexPositionEntity.parseOptional(startKey) };
}

/** The traces of `organizationId`'s invocations (`core/traces.ts` declares the store). */
export function traceStore(organizationId: string): TraceStore {
  return {
    organizationId,
    cursorKey,
    invocation: (invocationKey) => getInvocation(organizationId, invocationKey),
    session: (sessionId) => getSession(organizationId, sessionId),
    attempts: (invocationKey) => listAttempts(organizationId, invocationKey),
    spans: (invocationKey, attempt, afterSk, limit) => listSpans(organizationId, invocationKey, attempt, afterSk, limit),
    payload: (invocationKey, spanId, part, firstBytes) => readPayload(organizationId, invocationKey, spanId, part, firstBytes),
    span: async (invocationKey, attempt, seq) => {
      const { Item } = await dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.span(organizationId, invocationKey, attempt, seq), ConsistentRead: true }));
      return Item ? storedSpan(Item) : undefined;
    },
    search: (filters, window, limit, after) => searchInvocations(organizationId, filters, window, limit, after),
  };
}
