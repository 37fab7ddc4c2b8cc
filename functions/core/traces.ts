/**
 * Reading traces: one invocation's trace a page of spans at a time (GET /traces/{key})
 * and the search of an organization's invocations (GET /traces). Both page with signed
 * cursors that carry what the first page fixed: the payloads and attempts modes of a
 * trace, the window and filters of a search.
 */
import { z } from 'zod';
import { costOf, config } from '#kit/config';
import { spansExpired } from '#kit/retention';
import { totalUsage } from './usage';
import { sign, verify, type CursorKind, type CursorScope } from './cursor';
import { InvalidInputError, NotFoundError, UnavailableError } from './errors';
import type { Attempt, Invocation, RecordedSpan, Session } from './model';

/** A span as its record holds it: metadata, its payloads' descriptors and its place in the list. */
export interface StoredSpan extends Omit<RecordedSpan, 'seq'> {
  input_bytes?: number;
  input_sha256?: string;
  output_bytes?: number;
  output_sha256?: string;
  /** Where a page that ends with this span continues (the store's own position, carried by the cursor). */
  sk: string;
}

/** The GET /traces filters that pick an index or narrow its results. */
export interface TraceFilters {
  agent_name?: string;
  agent_revision?: string;
  status?: string;
  session_id?: string;
}

/** The `started_at` bounds of a search, both included. */
export interface SearchWindow {
  since: string;
  until: string;
}

/**
 * An invocation as the search finds it: one recorded before acceptance required a name
 * has neither name nor revision.
 */
export type ListedInvocation = Omit<Invocation, 'agent_name' | 'agent_revision'> & Partial<Pick<Invocation, 'agent_name' | 'agent_revision'>>;

/** Where a search continues: the store's own position, carried by the cursor as it was given. */
export type SearchPosition = Record<string, string>;

/** What reading traces needs of one organization's records; its cursors are signed for it. */
export interface TraceStore extends CursorScope {
  /** An invocation, read consistently. */
  invocation(invocationKey: string): Promise<Invocation | undefined>;
  /** A session, read consistently. */
  session(sessionId: string): Promise<Session | undefined>;
  /** The invocation's attempts, oldest first, read consistently. */
  attempts(invocationKey: string): Promise<Attempt[]>;
  /**
   * Up to `limit` spans, oldest first, after the span at `afterSk`: of one attempt, or of
   * all when `attempt` is undefined; `more` says whether more are stored already. Read
   * consistently, so a span shows as soon as it is written.
   */
  spans(invocationKey: string, attempt: number | undefined, afterSk: string | undefined, limit: number): Promise<{ spans: StoredSpan[]; more: boolean }>;
  /** One payload of a span, or only its first `firstBytes`; undefined when the bucket has none. */
  payload(invocationKey: string, spanId: string, part: 'input' | 'output', firstBytes?: number): Promise<Uint8Array | undefined>;
  /** One span by its position, read consistently. */
  span(invocationKey: string, attempt: number, seq: number): Promise<StoredSpan | undefined>;
  /**
   * Up to `limit` invocations started within the window, newest first, matching every
   * filter, from `after` on; and where to continue when more may follow (a page may be
   * short when the store stops reading early).
   */
  search(filters: TraceFilters, window: SearchWindow, limit: number, after: SearchPosition | undefined): Promise<{ invocations: ListedInvocation[]; next?: SearchPosition }>;
}

/** Spans per page: the bound and the default, with and without payloads. */
export const SPAN_PAGE_LIMITS = { withPayloads: 25, withoutPayloads: 500 } as const;

/** A payload above this many bytes is replaced by a preview (CONTRACT.md). */
export const PAYLOAD_INLINE_BYTES = 64 * 1024;

/** How much of a shortened payload its preview shows. */
export const PAYLOAD_PREVIEW_BYTES = 4 * 1024;

/** How far back GET /traces looks when `since` is not given. */
export const DEFAULT_SEARCH_DAYS = 31;

/**
 * An invocation as summaries (the spec's TraceSummary) show it: with its usage over all
 * attempts (recorded with the outcome; summed from `attempts` while it runs) and what that
 * cost, when the catalogue prices its model.
 */
export type SummarizedInvocation = Pick<
  ListedInvocation,
  'invocation_key' | 'session_id' | 'agent_name' | 'agent_revision' | 'status' | 'started_at' | 'ended_at' | 'usage' | 'model'
>;

export function traceSummary(invocation: SummarizedInvocation, now = Date.now(), attempts?: Pick<Attempt, 'usage'>[]) {
  const { invocation_key, session_id, agent_name, agent_revision, status, started_at, ended_at } = invocation;
  const usage = invocation.usage ?? totalUsage(attempts ?? []);
  const cost = invocation.model ? costOf(config.modelCatalogue, invocation.model, usage) : undefined;
  return {
    invocation_key,
    session_id,
    // Absent for invocations recorded without them.
    ...(agent_name ? { agent_name } : {}),
    ...(agent_revision ? { agent_revision } : {}),
    status,
    spans_expired: spansExpired(started_at, now),
    started_at,
    ...(ended_at ? { ended_at } : {}),
    usage,
    ...(cost !== undefined ? { cost_usd: cost } : {}),
  };
}

/** An attempt as clients see it (its checkpoint bookkeeping and answer stay inside). */
function attemptView({ number, status, started_at, ended_at, usage, failure }: Attempt) {
  return { number, status, started_at, ...(ended_at ? { ended_at } : {}), usage, ...(failure ? { failure } : {}) };
}

/**
 * The first `max` bytes of UTF-8 text as a string, without the character the cut would
 * split in two (a ranged read ends wherever the byte count says).
 */
export function textPrefix(bytes: Uint8Array, max: number): string {
  let end = Math.min(bytes.length, max);
  // Back over continuation bytes to the last character's first byte; drop it if incomplete.
  let start = end;
  while (start > 0 && (bytes[start - 1]! & 0xc0) === 0x80) start--;
  if (start > 0) {
    const first = bytes[start - 1]!;
    const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
    if (start - 1 + length > end) end = start - 1;
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('utf8');
}

/** A span's input or output and its descriptors, read from the bucket; null before it exists. */
async function payload(store: TraceStore, invocationKey: string, span: StoredSpan, part: 'input' | 'output') {
  const bytes = span[`${part}_bytes`];
  if (bytes === undefined) return { [part]: null };
  // The span says the payload was stored: without it the trace cannot be answered truthfully.
  const unreadable = () => new UnavailableError(`the ${part} payload of span ${span.id} could not be read; retry`, 2);
  const truncated = bytes > PAYLOAD_INLINE_BYTES;
  const data = await store.payload(invocationKey, span.id, part, truncated ? PAYLOAD_PREVIEW_BYTES : undefined);
  if (!data) throw unreadable();
  let value: unknown;
  if (truncated) {
    value = { truncated: true, preview: textPrefix(data, PAYLOAD_PREVIEW_BYTES) };
  } else {
    try {
      value = JSON.parse(Buffer.from(data).toString('utf8'));
    } catch {
      throw unreadable();
    }
  }
  return { [part]: value, [`${part}_bytes`]: bytes, [`${part}_sha256`]: span[`${part}_sha256`], [`${part}_truncated`]: truncated };
}

/** A span as clients see it, with its payloads when asked for. */
async function spanView(store: TraceStore, invocationKey: string, span: StoredSpan, options: { payloads: boolean; superseded: boolean }) {
  const { id, parent_id, type, name, status, started_at, ended_at, usage } = span;
  const view = {
    id,
    parent_id,
    type,
    name,
    status,
    started_at,
    ended_at: ended_at ?? null,
    usage,
    ...(options.superseded ? { superseded: true as const } : {}),
  };
  if (!options.payloads) return view;
  const [input, output] = await Promise.all([
    payload(store, invocationKey, span, 'input'),
    payload(store, invocationKey, span, 'output'),
  ]);
  return { ...view, ...input, ...output };
}

/**
 * The position a cursor of `kind` carries, as `schema` declares it. The signature proves
 * only who wrote it: one that does not match is as invalid as a forged one.
 */
async function positionIn<T>(store: TraceStore, kind: CursorKind, token: string, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await verify(store, kind, token));
  if (!parsed.success) throw new InvalidInputError('invalid pagination cursor');
  return parsed.data;
}

export interface TraceQuery {
  payloads?: boolean;
  attempts?: 'final' | 'all';
  after?: string;
  limit?: number;
}

/** What a trace cursor carries besides its organization and kind. */
interface TracePosition {
  invocationKey: string;
  payloads: boolean;
  attempts: 'final' | 'all';
  /** Sort key of the last span returned; absent before the first span. */
  sk?: string;
}

const tracePosition = z.object({
  invocationKey: z.string(),
  payloads: z.boolean(),
  attempts: z.enum(['final', 'all']),
  sk: z.string().optional(),
}) satisfies z.ZodType<TracePosition>;

/**
 * The modes of a trace page: those the cursor fixed, which a request may repeat but not
 * change, else the request's own or the defaults.
 */
async function traceModes(store: TraceStore, invocationKey: string, query: TraceQuery) {
  const position = query.after ? await positionIn(store, 'trace', query.after, tracePosition) : undefined;
  if (position && position.invocationKey !== invocationKey) throw new InvalidInputError('invalid pagination cursor: it pages another invocation');
  if (position && query.payloads !== undefined && query.payloads !== position.payloads) {
    throw new InvalidInputError(`the cursor pages with payloads=${position.payloads}; repeat that or leave payloads out`);
  }
  if (position && query.attempts !== undefined && query.attempts !== position.attempts) {
    throw new InvalidInputError(`the cursor pages with attempts=${position.attempts}; repeat that or leave attempts out`);
  }
  const payloads = position?.payloads ?? query.payloads ?? true;
  const attempts = position?.attempts ?? query.attempts ?? 'final';
  const bound = payloads ? SPAN_PAGE_LIMITS.withPayloads : SPAN_PAGE_LIMITS.withoutPayloads;
  if (query.limit !== undefined && query.limit > bound) {
    throw new InvalidInputError(`limit must be at most ${bound} with payloads=${payloads}`);
  }
  return { payloads, attempts, limit: query.limit ?? bound, afterSk: position?.sk };
}

/**
 * An invocation's trace: its summary, position, a page of spans (oldest first), every
 * attempt and the failure. Once the retention window has passed, only the summary,
 * position and failure remain, whatever the cloud has not deleted yet.
 */
export async function readTrace(store: TraceStore, invocationKey: string, query: TraceQuery, now = Date.now()) {
  const modes = await traceModes(store, invocationKey, query);
  const invocation = await store.invocation(invocationKey);
  if (!invocation) throw new NotFoundError(`invocation ${invocationKey} not found`);
  const failure = invocation.status === 'FAILED' && invocation.failure ? { failure: invocation.failure } : {};
  if (spansExpired(invocation.started_at, now)) return { ...traceSummary(invocation, now), session_position: invocation.session_position, spans: [], ...failure };

  const attempts = await store.attempts(invocationKey);
  const summary = traceSummary(invocation, now, attempts);
  const latest = attempts.at(-1)?.number;
  // Before the first attempt starts there is nothing to read (but spans will follow).
  const { spans, more } = latest === undefined
    ? { spans: [], more: false }
    : await store.spans(invocationKey, modes.attempts === 'final' ? latest : undefined, modes.afterSk, modes.limit);
  const views = await Promise.all(
    spans.map((span) =>
      spanView(store, invocationKey, span, { payloads: modes.payloads, superseded: modes.attempts === 'all' && span.attempt !== latest }),
    ),
  );
  // A running invocation may add spans after this page, however short it is.
  const sk = spans.at(-1)?.sk ?? modes.afterSk;
  const next: TracePosition | undefined = more || invocation.status === 'RUNNING'
    ? { invocationKey, payloads: modes.payloads, attempts: modes.attempts, ...(sk ? { sk } : {}) }
    : undefined;
  return {
    ...summary,
    session_position: invocation.session_position,
    spans: views,
    attempts: attempts.map(attemptView),
    ...failure,
    ...(next ? { next_cursor: await sign(store, 'trace', { ...next }) } : {}),
  };
}

export interface TraceSearchQuery extends TraceFilters {
  since?: string;
  until?: string;
  after?: string;
  limit: number;
}

/** What a search cursor carries besides its organization and kind. */
interface SearchCursor {
  /** The filters and window bounds the first page was given, as given (normalized). */
  given: Record<string, string>;
  window: SearchWindow;
  position: SearchPosition;
}

const searchCursor = z.object({
  given: z.record(z.string(), z.string()),
  window: z.object({ since: z.string(), until: z.string() }),
  position: z.record(z.string(), z.string()),
}) satisfies z.ZodType<SearchCursor>;

const FILTER_NAMES = ['agent_name', 'agent_revision', 'status', 'session_id'] as const;

/** The filters and bounds a request gives, timestamps normalized so equal instants compare equal. */
function givenFilters(query: TraceSearchQuery): Record<string, string> {
  const given: Record<string, string> = {};
  for (const name of FILTER_NAMES) if (query[name] !== undefined) given[name] = query[name]!;
  if (query.since !== undefined) given.since = new Date(query.since).toISOString();
  if (query.until !== undefined) given.until = new Date(query.until).toISOString();
  return given;
}

const sameFilters = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([name, value]) => b[name] === value);

/**
 * A page of the organization's invocations, newest first, within a window (default the
 * last 31 days) and matching every filter given. The first page fixes window and
 * filters; later pages repeat them exactly or not at all.
 */
export async function searchTraces(store: TraceStore, query: TraceSearchQuery, now = Date.now()) {
  const given = givenFilters(query);
  let cursor: SearchCursor | undefined;
  if (query.after) {
    cursor = await positionIn(store, 'traces', query.after, searchCursor);
    if (Object.keys(given).length && !sameFilters(given, cursor.given)) {
      throw new InvalidInputError('the cursor pages other filters: send it with no filters or with every filter of the first page');
    }
  }
  const first = cursor?.given ?? given;
  const window = cursor?.window ?? {
    since: first.since ?? new Date(now - DEFAULT_SEARCH_DAYS * 86_400_000).toISOString(),
    until: first.until ?? new Date(now).toISOString(),
  };
  if (!(window.until > window.since)) throw new InvalidInputError(`until (${window.until}) must be after since (${window.since})`);
  const filters: TraceFilters = Object.fromEntries(FILTER_NAMES.filter((name) => first[name] !== undefined).map((name) => [name, first[name]]));
  if (filters.session_id !== undefined && !(await store.session(filters.session_id))) {
    throw new NotFoundError(`session ${filters.session_id} not found`);
  }
  const { invocations, next } = await store.search(filters, window, query.limit, cursor?.position);
  const page: SearchCursor | undefined = next ? { given: first, window, position: next } : undefined;
  return {
    // Usage is recorded with the outcome: a running invocation's is summed from its attempts.
    traces: await Promise.all(invocations.map(async (invocation) =>
      traceSummary(invocation, now, invocation.usage ? undefined : await store.attempts(invocation.invocation_key)))),
    ...(page ? { next_cursor: await sign(store, 'traces', { ...page }) } : {}),
  };
}

/**
 * One span of an invocation with its payloads, by id: what a viewer expanding a span of a
 * long trace needs, without paging to it 25 payloads at a time. 404 for an unknown
 * invocation or span, and once the retention window has passed.
 */
export async function readSpan(store: TraceStore, invocationKey: string, spanId: string, now = Date.now()) {
  const position = /^inv-\d+\.att-(\d+)\.(\d+)$/.exec(spanId);
  const invocation = await store.invocation(invocationKey);
  if (!invocation) throw new NotFoundError(`invocation ${invocationKey} not found`);
  const [span, attempts] = position && !spansExpired(invocation.started_at, now)
    ? await Promise.all([store.span(invocationKey, Number(position[1]), Number(position[2])), store.attempts(invocationKey)])
    : [undefined, []];
  // A span id names its invocation's position too: another invocation's id is no span of this one.
  if (!span || span.id !== spanId) throw new NotFoundError(`invocation ${invocationKey} has no span ${spanId}`);
  return spanView(store, invocationKey, span, { payloads: true, superseded: span.attempt !== attempts.at(-1)?.number });
}
