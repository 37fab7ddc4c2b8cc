/**
 * An invocation's events (`GET /traces/{key}/events`), derived from what its runs already
 * record: attempt items, span items and the invocation's outcome. No second write path
 * exists, so the events cannot disagree with the trace.
 *
 * Each event's `seq` follows from the record's position: attempt `a` owns the range
 * `a × 1 000 000 ..`; its start is the range's first number, span `k` starts at `2k − 1`
 * and ends at `2k` within it, and the attempt's end is the range's last number. The
 * outcome follows every attempt. Records are written in that order (a span's end with the
 * next span's start, an attempt's end before the next opens, the outcome last), each write
 * guarded by its attempt, so a later read never finds an event below one already seen.
 * A query is not a snapshot, though: a read that sees a transaction half applied (a later
 * span started while an earlier one still runs) stops before the inconsistency and leaves
 * the rest to the next read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { spansExpired } from '#kit/retention';
import { sign, verify, type CursorScope } from './cursor';
import { InvalidInputError, NotFoundError } from './errors';
import type { Attempt, Invocation, Message, RecordedSpan } from './model';

/** What following an invocation reads, bound to one organization. */
export interface EventStore extends CursorScope {
  invocation(invocationKey: string): Promise<Invocation | undefined>;
  /** The invocation's attempts, oldest first, read consistently. */
  attempts(invocationKey: string): Promise<Attempt[]>;
  /** Up to `limit` spans from span `seq` of attempt `attempt` on (that one included), oldest first, read consistently. */
  spansFrom(invocationKey: string, attempt: number, seq: number, limit: number): Promise<{ spans: RecordedSpan[]; more: boolean }>;
  message(sessionId: string, cursor: number): Promise<Message | undefined>;
}

const ATTEMPT_RANGE = 1_000_000;
const ATTEMPT_END = ATTEMPT_RANGE - 1;
// After every attempt an invocation may have (MAX_ATTEMPTS is at most 10), expired spans or not.
const INVOCATION_END = 11 * ATTEMPT_RANGE;

// While a request waits, the records are read every POLL_MS: an event is answered within
// about that (plus the reads), for a small consistent read of the invocation and two small
// consistent queries a poll: about 60 read requests (60 read units) per waiting second.
const POLL_MS = 50;

const attemptView = ({ number, status, started_at, ended_at, usage, failure }: Attempt) => ({
  number, status, started_at, ...(ended_at ? { ended_at } : {}), usage, ...(failure ? { failure } : {}),
});

const spanView = (span: RecordedSpan, ended: { status: RecordedSpan['status']; ended_at: string | null; usage: RecordedSpan['usage'] }) => ({
  id: span.id, parent_id: span.parent_id, type: span.type, name: span.name, started_at: span.started_at, ...ended,
});

export type TraceEvent =
  | { seq: number; type: 'attempt_started' | 'attempt_ended'; time: string; attempt: ReturnType<typeof attemptView> }
  | { seq: number; type: 'span_started' | 'span_ended'; time: string; span: ReturnType<typeof spanView> }
  | { seq: number; type: 'invocation_ended'; time: string; status: Invocation['status']; failure?: Invocation['failure']; message?: Message };

/** The events the records show after `afterSeq`, in order, as far as they are consistent; `complete` once the outcome is among them. */
function derive(invocation: Invocation, attempts: Attempt[], spans: RecordedSpan[], spansCut: boolean, afterSeq: number) {
  const events: TraceEvent[] = [];
  const add = (event: TraceEvent) => {
    if (event.seq > afterSeq) events.push(event);
  };
  for (const [index, attempt] of attempts.entries()) {
    const base = attempt.number * ATTEMPT_RANGE;
    // A later attempt opens only after this one ended: seen running, the read is older than the next.
    if (index > 0 && attempts[index - 1]!.status === 'RUNNING') return { events, complete: false };
    add({ seq: base, type: 'attempt_started', time: attempt.started_at, attempt: { number: attempt.number, status: 'RUNNING', started_at: attempt.started_at, usage: { input_tokens: 0, output_tokens: 0 } } });
    const own = spans.filter((span) => span.attempt === attempt.number);
    for (const [position, span] of own.entries()) {
      const last = position === own.length - 1;
      // Only the last span of an attempt may run, and never in one that succeeded (its spans end with it).
      if (span.status === 'RUNNING' && (!last || attempt.status === 'SUCCEEDED')) return { events, complete: false };
      add({ seq: base + 2 * span.seq - 1, type: 'span_started', time: span.started_at, span: spanView(span, { status: 'RUNNING', ended_at: null, usage: null }) });
      if (span.status !== 'RUNNING') {
        add({ seq: base + 2 * span.seq, type: 'span_ended', time: span.ended_at ?? span.started_at, span: spanView(span, { status: span.status, ended_at: span.ended_at ?? null, usage: span.usage }) });
      } else if (attempt.status === 'FAILED') {
        // Cut off with its attempt: it ended, failed, when the attempt did.
        const at = attempt.ended_at ?? span.started_at;
        add({ seq: base + 2 * span.seq, type: 'span_ended', time: at, span: spanView(span, { status: 'FAILED', ended_at: at, usage: null }) });
      }
    }
    // The attempt's end waits for every one of its spans to have been read.
    if (spansCut || attempt.status === 'RUNNING') return { events, complete: false };
    add({ seq: base + ATTEMPT_END, type: 'attempt_ended', time: attempt.ended_at ?? attempt.started_at, attempt: attemptView(attempt) });
  }
  return { events, complete: invocation.status !== 'RUNNING' };
}

/** Where a page starts: after the event `seq` of this invocation (-1 before the first). */
async function position(store: EventStore, invocationKey: string, after: string | undefined): Promise<number> {
  if (!after) return -1;
  const cursor = await verify(store, 'events', after);
  if (cursor.invocationKey !== invocationKey || !Number.isSafeInteger(cursor.seq)) throw new InvalidInputError('invalid pagination cursor: it pages another invocation');
  return cursor.seq as number;
}

/** One read of the records: the page of events after `afterSeq`, and whether the outcome is its last. */
async function readOnce(store: EventStore, invocation: Invocation, afterSeq: number, limit: number, now: number) {
  const key = invocation.invocation_key;
  const ended = invocation.status !== 'RUNNING';
  let events: TraceEvent[] = [];
  let complete = ended;
  if (!spansExpired(invocation.started_at, now)) {
    const attempt = Math.max(1, Math.floor(afterSeq / ATTEMPT_RANGE));
    const local = Math.max(0, afterSeq - attempt * ATTEMPT_RANGE);
    // The span whose end could be the first event after the cursor.
    const fromSeq = Math.max(1, Math.ceil(local / 2));
    // Attempts first: the spans read after them are as new or newer, so a span seen running
    // in an attempt seen ended was cut off with it.
    const attempts = await store.attempts(key);
    const { spans, more } = await store.spansFrom(key, attempt, fromSeq, limit + 1);
    ({ events, complete } = derive(invocation, attempts, spans, more, afterSeq));
    complete &&= ended;
  }
  if (complete) {
    const message = invocation.status === 'SUCCEEDED' && invocation.answer_cursor ? await store.message(invocation.session_id, invocation.answer_cursor) : undefined;
    if (INVOCATION_END > afterSeq) {
      events.push({
        seq: INVOCATION_END, type: 'invocation_ended', time: invocation.ended_at ?? invocation.started_at, status: invocation.status,
        ...(invocation.failure ? { failure: invocation.failure } : {}), ...(message ? { message } : {}),
      });
    }
  }
  const page = events.slice(0, limit);
  return { page, delivered: page.at(-1)?.type === 'invocation_ended' };
}

export interface EventsQuery {
  after?: string;
  limit: number;
  waitSeconds: number;
}

/**
 * A page of an invocation's events after the cursor. With `waitSeconds`, an empty page is
 * held until an event is recorded or the wait passes. `next_cursor` is absent only on the
 * page that delivers `invocation_ended`.
 */
export async function readEvents(store: EventStore, invocationKey: string, query: EventsQuery, now = () => Date.now()) {
  const afterSeq = await position(store, invocationKey, query.after);
  const deadline = now() + query.waitSeconds * 1000;
  for (;;) {
    const invocation = await store.invocation(invocationKey);
    if (!invocation) throw new NotFoundError(`invocation ${invocationKey} not found`);
    const { page, delivered } = await readOnce(store, invocation, afterSeq, query.limit, now());
    if (page.length || now() >= deadline) {
      const lastSeq = page.at(-1)?.seq ?? afterSeq;
      return {
        status: invocation.status,
        events: page,
        ...(delivered ? {} : { next_cursor: await sign(store, 'events', { invocationKey, seq: lastSeq }) }),
      };
    }
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - now())));
  }
}
