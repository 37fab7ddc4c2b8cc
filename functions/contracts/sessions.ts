/** Sessions and their messages: /sessions/{id}. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { AgentConfig } from './agent';
import { FailureKind, IdempotencyKey, IdempotencyKeyHeader, Timestamp } from './common';
import { defineOperation } from './operation';

export const SessionId = z
  .string()
  .min(2)
  .max(100)
  .regex(/^[0-9a-zA-Z._:-]+$/, 'must be 2 to 100 characters of 0-9, a-z, A-Z, ., _, : or -');

export const SessionIdParams = z.object({ id: SessionId });

const digits = (name: string) => z.string().regex(/^\d{1,10}$/, `${name} must be a whole number`).transform(Number);

export const RunSessionQuery = z.object({
  wait_timeout_seconds: digits('wait_timeout_seconds').pipe(z.int().min(0).max(1800)).default(1800),
});

export const RunSessionHeaders = z.object({ 'idempotency-key': IdempotencyKey.optional() });

export const RunSessionBody = z.strictObject({
  user_prompt: z.string().min(1).max(200_000),
  agent_name: z.string().min(1).max(255),
  agent: AgentConfig,
});

export const GetSessionQuery = z.object({
  /** The `cursor` of the last message received. */
  after: digits('after').pipe(z.int().min(0)).optional(),
  limit: digits('limit').pipe(z.int().min(1).max(1000)).default(100),
});

export const Session = z.object({
  id: z.string(),
  state: z.enum(['IDLE', 'RUNNING']),
  invocation_count: z.int(),
  created_at: Timestamp,
  updated_at: Timestamp,
  current_invocation_key: z.string().optional(),
  agent_name: z.string().optional(),
  agent_revision: z.string().optional(),
});

export const Message = z.object({
  cursor: z.int(),
  invocation_key: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  created_at: Timestamp,
});

export const RunSessionResponse = z.object({ session: Session, message: Message.optional() });

/** 202: the invocation was accepted and has not answered (`wait_timeout_seconds=0`). */
export const RunAcceptedResponse = RunSessionResponse.omit({ message: true });

/** 502: the run itself failed; reusing its key replays this answer. */
export const RunFailedBody = z.object({ message: z.string(), kind: FailureKind });

/** 504: the wait ended before the run did; re-send the same request (same key) to re-attach. */
export const RunTimedOutBody = z.object({ message: z.string(), invocation_key: IdempotencyKey });

export const GetSessionResponse = z.object({ session: Session, messages: z.array(Message), next_cursor: z.string().optional() });

/** A signed cursor from a previous page's `next_cursor`. */
const SignedCursor = z.string().min(1).max(2048);

export const ListSessionsQuery = z.object({
  after: SignedCursor.optional(),
  limit: digits('limit').pipe(z.int().min(1).max(1000)).default(100),
});

export const ListSessionsResponse = z.object({ sessions: z.array(Session), next_cursor: z.string().optional() });

export const GetAuditQuery = ListSessionsQuery;

export const AuditEvent = z.object({
  id: z.string(),
  session_id: z.string(),
  invocation_key: z.string(),
  type: z.enum(['agent_invocation', 'llm_call', 'tool_result', 'memory_written', 'run_succeeded', 'run_failed']),
  payload: z.record(z.string(), z.unknown()),
  event_time: Timestamp,
  agent_revision: z.string(),
});

export const GetAuditResponse = z.object({ events: z.array(AuditEvent), next_cursor: z.string().optional() });

export const runSessionOperation = defineOperation({
  route: routeOf('POST /sessions/{id}'),
  tag: 'Sessions',
  summary: 'Run or resume a session',
  description:
    'Starts an invocation of the session (created on first use) and waits up to `wait_timeout_seconds` for its answer. The `Idempotency-Key` header names the invocation: the same key and a byte-identical body re-attach to it, the same key with another body gives 409, a new key while an invocation runs gives 423. Without the header the server generates a key, returns it in the `Idempotency-Key` response header, and the request is not retry-safe. A deployment answers a long wait in slices below its gateway limit: a 504 then means "re-send the same request to keep waiting".',
  input: { params: SessionIdParams, query: RunSessionQuery, headers: RunSessionHeaders, body: RunSessionBody },
  responses: {
    200: { description: 'The invocation succeeded within the wait; `message` is its answer.', body: RunSessionResponse, headers: IdempotencyKeyHeader },
    202: { description: 'Accepted (`wait_timeout_seconds=0`); read the answer later with GET /sessions/{id}.', body: RunAcceptedResponse, headers: IdempotencyKeyHeader },
    502: { description: 'The run failed; `kind` is the failure class. Retry with a new key.', body: RunFailedBody, headers: IdempotencyKeyHeader },
    504: { description: 'The wait elapsed; the run continues. Re-send with the same key to re-attach, or poll GET /sessions/{id}.', body: RunTimedOutBody, headers: IdempotencyKeyHeader },
  },
  // 404: the session was deleted while its run was waited for.
  errors: [404, 409, 423, 429],
});

export const getSessionOperation = defineOperation({
  route: routeOf('GET /sessions/{id}'),
  tag: 'Sessions',
  summary: 'Read a session and its messages',
  description: 'Messages by `cursor` ascending. Pass the `cursor` of the last message received as `after` for the next page; `next_cursor` is present when more follow.',
  input: { params: SessionIdParams, query: GetSessionQuery },
  responses: { 200: { description: 'The session and a page of its messages.', body: GetSessionResponse } },
  errors: [404],
});

export const listSessionsOperation = defineOperation({
  route: routeOf('GET /sessions'),
  tag: 'Sessions',
  summary: "List the organization's sessions, newest activity first",
  input: { query: ListSessionsQuery },
  responses: { 200: { description: 'A page of sessions; `next_cursor` is present when more follow.', body: ListSessionsResponse } },
  errors: [],
});

export const getAuditOperation = defineOperation({
  route: routeOf('GET /sessions/{id}/audit'),
  tag: 'Sessions',
  summary: "Read a session's audit log, in event time order",
  description: 'The audit log is immutable. Pass `next_cursor` as `after` for the next page.',
  input: { params: SessionIdParams, query: GetAuditQuery },
  responses: { 200: { description: 'A page of audit events.', body: GetAuditResponse } },
  errors: [404],
});

export const deleteSessionOperation = defineOperation({
  route: routeOf('DELETE /sessions/{id}'),
  tag: 'Sessions',
  summary: 'Delete a session and everything it recorded',
  description:
    'Deletes the session, its messages, its audit log and its invocations\' traces and payloads. A running invocation is stopped first and ends FAILED with kind `interrupted`. Memories stay: they belong to their group.',
  input: { params: SessionIdParams },
  responses: { 204: { description: 'Deleted.' } },
  errors: [404],
});
