/** Traces: one invocation's spans, and the search over invocations. */
import { path, type RequestOptions, type Transport } from '../core';
import { PagePromise } from '../pagination';
import type { Span, TraceGetParams, TraceGetResponse, TraceListParams, TraceListResponse, TraceSummary } from '../types';

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
