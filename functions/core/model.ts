/**
 * The domain's own nouns: what a session, an invocation and its failure are, whatever
 * stores them. `core/` declares them; `data/` reads and writes them.
 */

export type InvocationStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type FailureKind = 'crash' | 'no_progress' | 'interrupted' | 'internal';

export interface Failure {
  kind: FailureKind;
  message: string;
}

export interface Session {
  id: string;
  state: 'IDLE' | 'RUNNING';
  invocation_count: number;
  message_count: number;
  created_at: string;
  updated_at: string;
  current_invocation_key?: string;
  agent_name?: string;
  agent_revision?: string;
}

export interface Invocation {
  invocation_key: string;
  session_id: string;
  session_position: number;
  status: InvocationStatus;
  agent_name: string;
  agent_revision: string;
  /** SHA-256 of the request body exactly as sent: what a retry must match. */
  body_sha256: string;
  started_at: string;
  ended_at?: string;
  failure?: Failure;
  /** The cursor of the invocation's user message (written at acceptance). */
  user_cursor: number;
  /** The cursor of the assistant message a successful invocation produced. */
  answer_cursor?: number;
  /** A cancel request recorded its outcome. */
  cancelled?: true;
  /** The model its configuration runs (what its usage is priced by); absent on invocations recorded before. */
  model?: { provider: string; name: string };
  /** The usage of all its attempts, recorded with the outcome. */
  usage?: Usage;
}

/** The facts of a running invocation its recorders need; never changed after acceptance. */
export type InvocationFacts = Pick<Invocation, 'invocation_key' | 'session_id' | 'session_position' | 'agent_name' | 'agent_revision' | 'started_at'>;

/** Why an acceptance did not happen; the caller maps each to a status. */
export type Refusal =
  | { reason: 'key_in_use'; invocation: Invocation }
  | { reason: 'session_changed' | 'quota_exhausted' };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface Attempt {
  number: number;
  status: InvocationStatus;
  started_at: string;
  ended_at?: string;
  usage: Usage;
  failure?: Failure;
  /** Model calls made so far; written at every checkpoint, so a stalled attempt shows. */
  steps: number;
  /** The final answer of a successful attempt (the outcome turns it into the message). */
  answer?: string;
}

/** How an invocation ended, as its outcome records it: the answer when it succeeded, else the failure. */
export interface Outcome {
  invocation: InvocationFacts;
  endedAt: string;
  answer?: string;
  failure?: Failure;
  /** The session's message count as seen while the invocation held it (the answer takes the next cursor). */
  messageCount: number;
  usage: Usage;
  /** The outcome is a cancel request's. */
  cancelled?: true;
}

/** A message of a session's conversation, by its cursor there. */
export interface Message {
  cursor: number;
  invocation_key: string;
  role: 'user' | 'assistant';
  content: string;
  created_at: string;
}

export type AuditEventType = 'agent_invocation' | 'llm_call' | 'tool_result' | 'memory_written' | 'run_succeeded' | 'run_failed';

/** An event of a session's audit log. */
export interface AuditEvent {
  id: string;
  session_id: string;
  invocation_key: string;
  type: AuditEventType;
  payload: Record<string, unknown>;
  event_time: string;
  agent_revision: string;
}

export type MemoryStatus = 'active' | 'replaced';

/** A memory of a group: written by an invocation, replaced (not deleted) by a newer one. */
export interface Memory {
  id: string;
  content: string;
  status: MemoryStatus;
  created_at: string;
  source_session: string;
  source_invocation: string;
}

/** A span as its record holds it: metadata only (payloads live in the bucket). */
export interface RecordedSpan {
  id: string;
  type: 'model_call' | 'tool_call';
  name: string;
  parent_id: string | null;
  attempt: number;
  /** Its position within the attempt, from 1. */
  seq: number;
  status: InvocationStatus;
  started_at: string;
  ended_at?: string;
  usage: Usage | null;
}
