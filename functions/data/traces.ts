/**
 * Reading traces: an invocation's spans a page at a time, their payloads, and the search
 * of an organization's invocations through the sparse trace indexes (`keys.traceListing`).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import { UnavailableError } from '#core/errors';
import { dynamo, queryPage } from './dynamo';
import type { Invocation } from '#core/model';
import { keys } from './keys';
import { getBytes, payloadKey } from './payloads';

/** A span as its item records it. */
export interface StoredSpan {
  id: string;
  type: 'model_call' | 'tool_call';
  name: string;
  parent_id: string | null;
  attempt: number;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  started_at: string;
  ended_at?: string;
  usage: { input_tokens: number; output_tokens: number } | null;
  input_bytes?: number;
  input_sha256?: string;
  output_bytes?: number;
  output_sha256?: string;
  /** The item's sort key: where the next page continues. */
  sk: string;
}

const toSpan = (item: Record<string, unknown>) =>
  ({
    id: item.id,
    type: item.span_type,
    name: item.name,
    parent_id: item.parent_id ?? null,
    attempt: item.attempt,
    status: item.status,
    started_at: item.started_at,
    ended_at: item.ended_at,
    usage: item.usage ?? null,
    input_bytes: item.input_bytes,
    input_sha256: item.input_sha256,
    output_bytes: item.output_bytes,
    output_sha256: item.output_sha256,
    sk: item.sk,
  }) as StoredSpan;

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
    return { spans: items.map(toSpan), more };
  } catch (error) {
    if (isTransient(error)) throw new UnavailableError('the trace spans could not be read; retry', 1);
    throw error;
  }
}

/**
 * One payload of a span, or only its first `firstBytes`. A payload the span records but
 * the bucket cannot give (missing object, bucket unreachable) is UnavailableError: the
 * span says it was stored, so the trace cannot be answered truthfully without it.
 */
export async function readPayload(
  organizationId: string,
  invocationKey: string,
  spanId: string,
  part: 'input' | 'output',
  firstBytes?: number,
): Promise<Uint8Array> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await getBytes(payloadKey(organizationId, invocationKey, spanId, part), firstBytes);
  } catch {
    throw new UnavailableError('the span payloads could not be read; retry', 2);
  }
  if (!bytes) throw new UnavailableError(`the ${part} payload of span ${spanId} could not be read; retry`, 2);
  return bytes;
}

/** The GET /traces filters that pick an index or narrow its results. */
export interface TraceFilters {
  agent_name?: string;
  agent_revision?: string;
  status?: string;
  session_id?: string;
}

/** Where a search continues: the last evaluated position in its index. */
export type SearchPosition = Record<string, string>;

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
export async function searchInvocations(
  organizationId: string,
  filters: TraceFilters,
  window: { since: string; until: string },
  limit: number,
  after: SearchPosition | undefined,
): Promise<{ invocations: Invocation[]; next?: SearchPosition }> {
  const { index, filter } = plan(organizationId, filters);
  const found: Record<string, unknown>[] = [];
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
    found.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
    if (found.length > limit) {
      // Full, and one more is known to follow: continue after the last one returned.
      const last = found[limit - 1]!;
      const position: SearchPosition = { pk: String(last.pk), sk: String(last.sk), [index.attribute]: index.value, started_at: String(last.started_at) };
      return { invocations: found.slice(0, limit) as unknown as Invocation[], next: position };
    }
    if (!startKey) return { invocations: found as unknown as Invocation[] };
  }
  return { invocations: found as unknown as Invocation[], next: startKey as SearchPosition };
}
