/** Following an invocation: its events in order, across pages, long polls and broken connections. */
import { sleep } from './core';
import type { TraceEvent, TraceEventsResponse } from './types';

/** The event types this client knows; the service may add others, which are skipped. */
const KNOWN_TYPES: ReadonlySet<string> = new Set<TraceEvent['type']>(['attempt_started', 'span_started', 'span_ended', 'attempt_ended', 'invocation_ended']);

export interface EventStreamStart {
  after?: string;
  lastSeq?: number;
}

/**
 * The events of one invocation as they happen. `for await (const event of stream)` yields
 * each event once, in order, until `invocation_ended` (always the last). A page is asked
 * for again from the same cursor when its request fails (`fetchPage` retries), so a broken
 * connection neither repeats nor skips an event. Aborting `signal` ends the iteration
 * without an error; `cursor` and `lastSeq` say where to resume, in this stream (iterate it
 * again) or in a new one (`{ after: cursor, last_seq: lastSeq }`).
 */
export class EventStream implements AsyncIterable<TraceEvent> {
  /** Where the page being read starts: every event before it was yielded. */
  cursor: string | undefined;
  /** The `seq` of the last event yielded (or skipped as unknown): events after the cursor up to it are not yielded again. */
  lastSeq: number | undefined;
  /** The invocation's status as the last page said. */
  status: TraceEventsResponse['status'] | undefined;
  /** True once the service said no event follows (the page that delivered `invocation_ended`). */
  ended = false;

  constructor(
    private readonly fetchPage: (after: string | undefined) => Promise<TraceEventsResponse>,
    start: EventStreamStart,
    /** The pause after an empty page: a page the service did not hold returns at once. */
    private readonly pollMs: number,
    private readonly signal?: AbortSignal,
  ) {
    this.cursor = start.after;
    this.lastSeq = start.lastSeq;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<TraceEvent> {
    while (!this.ended && !this.signal?.aborted) {
      const page = await this.stopOnAbort(this.fetchPage(this.cursor));
      if (!page) return;
      this.status = page.status;
      for (const event of page.events) {
        if (this.lastSeq !== undefined && event.seq <= this.lastSeq) continue;
        this.lastSeq = event.seq;
        if (!KNOWN_TYPES.has(event.type)) continue;
        yield event;
        if (this.signal?.aborted) return;
      }
      if (page.next_cursor === undefined) {
        this.ended = true;
        return;
      }
      this.cursor = page.next_cursor;
      if (page.events.length === 0 && this.pollMs > 0 && !(await this.stopOnAbort(sleep(this.pollMs, this.signal).then(() => true)))) return;
    }
  }

  /** What `work` resolves to, or undefined when it failed because `signal` aborted. */
  private async stopOnAbort<T>(work: Promise<T>): Promise<T | undefined> {
    try {
      return await work;
    } catch (error) {
      if (this.signal?.aborted) return undefined;
      throw error;
    }
  }
}
