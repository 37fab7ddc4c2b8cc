/** Sessions and their messages: /sessions/{id}. */
import { z } from 'zod';
import { AgentConfig } from './agent';
import { IdempotencyKey, Timestamp } from './common';

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
  after: digits('after').optional(),
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
