/**
 * The harness's seams: model providers, tools, span recording and secret redaction.
 * Everything here is provider-neutral and free of storage; the run-steps task plugs in
 * the implementations (DynamoDB/S3 span recorder, resolved secrets, configured tools).
 */

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** One function call the model asked for. `arguments` is the JSON text exactly as the model wrote it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One message of a conversation, the same for every provider. Plain JSON: the
 * conversation is checkpointed between steps and may continue in another process.
 */
export type ConversationMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** What the model may call: a name, what it does, and a JSON Schema object for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolContext {
  /** Aborted when the attempt is being stopped; long-running tools should give up. */
  signal: AbortSignal;
}

/** A tool the harness runs. A thrown error is handed back to the model as `{error: message}`. */
export interface Tool extends ToolSpec {
  call(args: unknown, context: ToolContext): Promise<unknown>;
}

/** Asks the model for an answer matching this JSON Schema (`output_format.type = json_schema`). */
export interface ResponseFormat {
  type: 'json_schema';
  schema: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  system?: string;
  messages: ConversationMessage[];
  tools: ToolSpec[];
  responseFormat?: ResponseFormat;
}

export interface ModelResponse {
  /** The assistant's text; null when it only called tools. */
  text: string | null;
  toolCalls: ToolCall[];
  usage: Usage;
  /** The provider-native response body, recorded as the model_call span's output. */
  response: unknown;
}

/** One model API behind one interface; failures after its own retries throw `ProviderError`. */
export interface ModelProvider {
  /**
   * The provider-native request body `complete` sends for this request. The harness
   * records it as the model_call span's input before the call, so a call that fails
   * still shows what was asked.
   */
  body(request: ModelRequest): unknown;
  complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
}

export type SpanStatus = 'SUCCEEDED' | 'FAILED';

export interface SpanStart {
  /** `inv-<session_position>.att-<attempt>.<seq>`, assigned by the harness (see `spanId`). */
  id: string;
  type: 'model_call' | 'tool_call';
  /** The model name or the tool name. */
  name: string;
  parent_id: string | null;
  input: unknown;
}

export interface SpanEnd {
  status: SpanStatus;
  output: unknown;
  /** Token usage of a model call; null for tool calls. */
  usage: Usage | null;
}

/**
 * Where spans go as they happen: `start` before the call, `end` after it, both within one
 * step and so by one recorder (a step is never resumed halfway). The harness owns the ids
 * (their sequence lives in the checkpointed attempt state), so the next slice, in another
 * process, continues the same numbering with a recorder of its own.
 * Every name, input and output it receives has already been redacted.
 */
export interface SpanRecorder {
  start(span: SpanStart): Promise<void>;
  end(id: string, outcome: SpanEnd): Promise<void>;
}

/** Replaces every resolved secret value in what is about to be recorded. */
export interface Redactor {
  redact<T>(value: T): T;
}

/** A span id: `inv-3.att-1.7` is the 7th span of attempt 1 of the session's 3rd invocation. */
export function spanId(sessionPosition: number, attempt: number, seq: number): string {
  return `inv-${sessionPosition}.att-${attempt}.${seq}`;
}
