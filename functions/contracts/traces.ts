/** Traces: GET /traces/{invocation_key} and GET /traces. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { FailureKind, IdempotencyKey, Timestamp } from './common';
import { defineOperation } from './operation';
import { Message, SessionId } from './sessions';

const digits = (name: string) => z.string().regex(/^\d{1,10}$/, `${name} must be a whole number`).transform(Number);

/** A signed cursor from a previous page's `next_cursor`. */
const SignedCursor = z.string().min(1).max(4096);

const Status = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']);

/** A timestamp with a `Z` or a numeric offset. */
const Instant = z.iso.datetime({ offset: true });

export const GetTraceParams = z.object({ invocation_key: IdempotencyKey });

export const GetTraceQuery = z.object({
  /** Default true; a cursor's own mode when paging. */
  payloads: z.enum(['true', 'false'], { message: 'payloads must be true or false' }).transform((value) => value === 'true').optional(),
  /** Default final; a cursor's own mode when paging. */
  attempts: z.enum(['final', 'all']).optional(),
  after: SignedCursor.optional(),
  /** 1 to 500; the bound of the payloads mode (25 with payloads) is checked with the mode. */
  limit: digits('limit').pipe(z.int().min(1).max(500)).optional(),
});

export const ListTracesQuery = z.object({
  agent_name: z.string().min(1).max(255).optional(),
  agent_revision: z.string().min(1).max(255).optional(),
  status: Status.optional(),
  session_id: SessionId.optional(),
  since: Instant.optional(),
  until: Instant.optional(),
  after: SignedCursor.optional(),
  limit: digits('limit').pipe(z.int().min(1).max(100)).default(50),
});

const Usage = z.object({ input_tokens: z.int(), output_tokens: z.int() });
const Failure = z.object({ kind: FailureKind, message: z.string() });

export const TraceSummary = z.object({
  invocation_key: z.string(),
  session_id: z.string(),
  agent_name: z.string().optional(),
  agent_revision: z.string().optional(),
  status: Status,
  spans_expired: z.boolean(),
  started_at: Timestamp,
  ended_at: Timestamp.optional(),
  usage: Usage.describe('Summed over all attempts; zero while nothing was used.'),
  cost_usd: z.number().optional().describe('What the usage cost in USD (so far, while it runs), when the model catalogue prices the model.'),
});

/** What a payload field holds: the JSON value, or a preview of one above 64 KiB. */
const Payload = z
  .unknown()
  .describe('The JSON value; above 64 KiB, `{"truncated": true, "preview": "<first 4 KiB as text>"}` with `*_truncated: true`. `*_bytes` and `*_sha256` describe the complete value.');

export const Span = z.object({
  id: z.string().regex(/^inv-\d+\.att-\d+\.\d+$/),
  parent_id: z.string().nullable(),
  type: z.enum(['model_call', 'tool_call']),
  name: z.string(),
  status: Status,
  started_at: Timestamp,
  ended_at: Timestamp.nullable(),
  usage: Usage.nullable(),
  superseded: z.literal(true).optional(),
  input: Payload.optional(),
  input_bytes: z.int().optional(),
  input_sha256: z.string().optional(),
  input_truncated: z.boolean().optional(),
  output: Payload.optional(),
  output_bytes: z.int().optional(),
  output_sha256: z.string().optional(),
  output_truncated: z.boolean().optional(),
});

export const Attempt = z.object({
  number: z.int().min(1),
  status: Status,
  started_at: Timestamp,
  ended_at: Timestamp.optional(),
  usage: Usage,
  failure: Failure.optional(),
});

export const GetTraceResponse = TraceSummary.extend({
  session_position: z.int().min(1),
  spans: z.array(Span),
  attempts: z.array(Attempt).optional(),
  failure: Failure.optional(),
  next_cursor: z.string().optional(),
});

export const ListTracesResponse = z.object({ traces: z.array(TraceSummary), next_cursor: z.string().optional() });

export const TraceEventsQuery = z.object({
  after: SignedCursor.optional(),
  limit: digits('limit').pipe(z.int().min(1).max(500)).default(100),
  wait_seconds: digits('wait_seconds').pipe(z.int().min(0).max(20)).default(0),
});

const eventFields = {
  seq: z.int().min(0).describe('Strictly increasing within the invocation; not contiguous.'),
  time: Timestamp,
};

export const TraceEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('attempt_started'), ...eventFields, attempt: Attempt }),
  z.object({ type: z.literal('span_started'), ...eventFields, span: Span }),
  z.object({ type: z.literal('span_ended'), ...eventFields, span: Span }),
  z.object({ type: z.literal('attempt_ended'), ...eventFields, attempt: Attempt }),
  z.object({
    type: z.literal('invocation_ended'),
    ...eventFields,
    status: Status,
    failure: Failure.optional(),
    message: Message.optional().describe('The assistant message, when it succeeded.'),
  }),
]);

export const TraceEventsResponse = z.object({
  status: Status,
  events: z.array(TraceEvent),
  next_cursor: z.string().optional(),
});

export const CancelTraceResponse = TraceSummary.extend({ failure: Failure.optional() });

export const CancelConflictResponse = z.object({ message: z.string(), status: Status });

export const listTracesOperation = defineOperation({
  route: routeOf('GET /traces'),
  tag: 'Traces',
  summary: 'Search invocations, newest first, without spans',
  description:
    'The window (`since`, default 31 days back, to `until`, default now) is fixed on the first page. Keep requesting with `after` set to `next_cursor` while it is present: a page can be short or empty and still have one. A cursor carries the window and the filters: send it with no filters or with every filter repeated exactly, otherwise 400. An unknown `session_id` gives 404; any other filter matching nothing gives an empty page.',
  input: { query: ListTracesQuery },
  responses: { 200: { description: 'A page of invocation summaries.', body: ListTracesResponse } },
  errors: [404],
});

export const getTraceOperation = defineOperation({
  route: routeOf('GET /traces/{invocation_key}'),
  tag: 'Traces',
  summary: "Read an invocation's trace, a page of spans at a time",
  description:
    'With `payloads` (default true) spans carry `input` and `output` and their descriptors, and `limit` is 1 to 25 (default 25); with `payloads=false`, 1 to 500 (default 500). A cursor carries the `payloads` mode: paging with a different one gives 400. `attempts=all` adds the spans of earlier attempts, marked `superseded`. Spans become readable seconds after they happen. A 503 means the spans could not be read: retry (after `Retry-After` seconds when present).',
  input: { params: GetTraceParams, query: GetTraceQuery },
  responses: { 200: { description: 'The invocation, its attempts and a page of its spans.', body: GetTraceResponse } },
  errors: [404],
});

export const traceEventsOperation = defineOperation({
  route: routeOf('GET /traces/{invocation_key}/events'),
  tag: 'Traces',
  summary: 'Follow what happens in an invocation, in order, as it happens',
  description:
    'Events of every attempt (superseded ones included), oldest first, each with a strictly increasing `seq`. Without `after` the page starts at the first event. `next_cursor` is present while more events may follow and absent on the page that delivers `invocation_ended`, always the last event. With `wait_seconds` > 0 and nothing after the cursor yet, the request is held until an event is recorded or the wait elapses (then `events` is empty). A client looping on `next_cursor` sees every event exactly once. Once the spans have expired only `invocation_ended` is listed.',
  input: { params: GetTraceParams, query: TraceEventsQuery },
  responses: { 200: { description: 'A page of events.', body: TraceEventsResponse } },
  errors: [404],
});

export const cancelTraceOperation = defineOperation({
  route: routeOf('POST /traces/{invocation_key}/cancel'),
  tag: 'Traces',
  summary: 'Cancel a running invocation',
  description:
    'Records the outcome (FAILED, `interrupted`, a message starting with `cancelled`) and releases the session at once, then stops the execution: no model or tool call starts afterwards. Cancelling an invocation a cancel ended answers 200 again; one that ended otherwise answers 409 with its `status`.',
  input: { params: GetTraceParams },
  responses: {
    200: { description: 'The cancelled invocation.', body: CancelTraceResponse },
    409: { description: 'The invocation ended otherwise: its status.', body: CancelConflictResponse },
  },
  errors: [404],
});

export const GetSpanParams = z.object({ invocation_key: IdempotencyKey, span_id: z.string().min(1).max(64) });

export const getSpanOperation = defineOperation({
  route: routeOf('GET /traces/{invocation_key}/spans/{span_id}'),
  tag: 'Traces',
  summary: 'Read one span of an invocation with its payloads',
  description:
    'The span as `GET /traces/{invocation_key}` shows it with payloads, by id, without paging to it: what a viewer expanding one span of a long trace needs. 404 for an unknown span, and once the trace\'s spans have expired. A 503 means the payloads could not be read: retry.',
  input: { params: GetSpanParams },
  responses: { 200: { description: 'The span and its payloads.', body: Span } },
  errors: [404],
});
