/** Traces: one invocation's spans and events, cancelling it, and the search over invocations. */
import { path, type RequestOptions, type Transport } from '../core';
import { PagePromise } from '../pagination';
import { EventStream } from '../streaming';
import type {
  Span,
  TraceCancelResponse,
  TraceEventsParams,
  TraceEventsResponse,
  TraceGetParams,
  TraceGetResponse,
  TraceListParams,
  TraceListResponse,
  TraceSummary,
} from '../types';

/** The longest the service holds an events request, and the client's default. */
const MAX_WAIT_SECONDS = 20;
/** How much longer than the hold the client gives one answer before it gives up on the connection. */
const ANSWER_MARGIN_MS = 30_000;
/** A follower retries each page this many times (about a minute of backoff) unless told otherwise. */
const FOLLOW_MAX_RETRIES = 10;
/** The pause between polls when the service is asked not to hold requests. */
const POLL_MS = 1000;

export class Traces {
  constructor(private readonly transport: Transport) {}

  /**
   * The trace of invocation `invocationKey` with its first page of spans (oldest first);
   * iterate for every span. A 503 (spans not readable yet) is retried after its Retry-After.
   */
  get(invocationKey: string, params: TraceGetParams = {}, options: RequestOptions = {}): PagePromise<TraceGetResponse, Span> {
    const tracePath = path`/traces/${invocationKey}`;
    const { after: start, ...query } = params;
    return new PagePromise(
      (after) => this.transport.get<TraceGetResponse>({ path: tracePath, query: { ...query, after } }, options),
      (page) => page.spans,
      start,
    );
  }

  /** One span of invocation `invocationKey` with its payloads, by id (`inv-<n>.att-<a>.<seq>`). */
  async span(invocationKey: string, spanId: string, options: RequestOptions = {}): Promise<Span> {
    return this.transport.get<Span>({ path: path`/traces/${invocationKey}/spans/${spanId}` }, options);
  }

  /**
   * Follows invocation `invocationKey`: iterate for its events, each once and in order,
   * until `invocation_ended`. Long-polls (`wait_seconds`, default 20) and carries on from
   * its cursor after a broken connection, a 429 or a 5xx, with backoff. `options.signal`
   * stops following; the stream's `cursor` and `lastSeq` say where to resume.
   */
  events(invocationKey: string, params: TraceEventsParams = {}, options: RequestOptions = {}): EventStream {
    const eventsPath = path`/traces/${invocationKey}/events`;
    const { after, last_seq: lastSeq, limit, wait_seconds: wait = MAX_WAIT_SECONDS } = params;
    const fetchPage = (cursor: string | undefined) =>
      this.transport.get<TraceEventsResponse>(
        { path: eventsPath, query: { after: cursor, limit, wait_seconds: wait }, retry: 'follow', timeoutMs: wait * 1000 + ANSWER_MARGIN_MS },
        { maxRetries: FOLLOW_MAX_RETRIES, ...options },
      );
    return new EventStream(fetchPage, { after, lastSeq }, wait === 0 ? POLL_MS : 0, options.signal);
  }

  /**
   * Cancels running invocation `invocationKey` and returns its summary, FAILED `interrupted`.
   * Cancelling again is harmless (so it is retried like a read); an invocation that ended
   * otherwise gives `ConflictError` with its `invocationStatus`.
   */
  async cancel(invocationKey: string, options: RequestOptions = {}): Promise<TraceCancelResponse> {
    return this.transport.post<TraceCancelResponse>({ path: path`/traces/${invocationKey}/cancel`, retry: 'idempotent' }, options);
  }

  /** Invocations newest first, filtered (default window: the last 31 days); iterate for all of them. */
  list(params: TraceListParams = {}, options: RequestOptions = {}): PagePromise<TraceListResponse, TraceSummary> {
    const { after: start, ...filters } = params;
    return new PagePromise(
      (after) => {
        // The cursor carries the window and the filters; they are sent again as they were.
        const query = { ...filters, after };
        return this.transport.get<TraceListResponse>({ path: '/traces', query }, options);
      },
      (page) => page.traces,
      start,
    );
  }
}
