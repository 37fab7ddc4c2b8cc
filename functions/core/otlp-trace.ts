/**
 * A recorded invocation as one OTLP trace (CONTRACT.md, "OTLP export"): the body of an
 * OTLP/HTTP protobuf export, built from what the trace store holds. Pure: the caller
 * reads the records and sends the bytes.
 *
 * The spans follow the GenAI semantic conventions: a root `invoke_agent <agent>`, a
 * `chat <model>` per model call under it and an `execute_tool <tool>` per tool call under
 * the model call that requested it. Ids are derived from the organization, the invocation
 * key and our span ids, so exporting the same invocation again names the same trace and
 * the same spans (a backend deduplicates or overwrites instead of showing it twice).
 */
import { createHash } from 'node:crypto';
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type HrTime, type SpanContext, type SpanStatus } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from '@opentelemetry/semantic-conventions/incubating';

type Status = 'SUCCEEDED' | 'FAILED' | 'RUNNING';

/** What one export needs: the invocation, its attempts and the spans of every attempt. */
export interface OtlpTraceInput {
  organizationId: string;
  invocation: {
    invocation_key: string;
    session_id: string;
    agent_name: string;
    agent_revision: string;
    status: Status;
    started_at: string;
    ended_at?: string;
    failure?: { kind: string; message: string };
    /** Its configuration's model; `provider` is ours: `openai`, `anthropic` or `bedrock`. */
    model?: { provider: string; name: string };
  };
  attempts: { number: number; status: Status; started_at: string; ended_at?: string }[];
  spans: {
    id: string;
    type: 'model_call' | 'tool_call';
    name: string;
    parent_id: string | null;
    attempt: number;
    status: Status;
    started_at: string;
    ended_at?: string;
    usage: { input_tokens: number; output_tokens: number } | null;
    /** Payload text, present only when payloads are exported (already redacted). */
    input?: string;
    output?: string;
  }[];
  /** Put payloads in gen_ai.input.messages / gen_ai.output.messages (truncated to 64 KiB each, at a UTF-8 character boundary). */
  payloads: boolean;
}

/** Our own attributes, beside the semantic conventions'. */
const ATTR_AGENT_SESSIONS_INVOCATION_KEY = 'agent_sessions.invocation_key';
const ATTR_AGENT_SESSIONS_REVISION = 'agent_sessions.revision';
const ATTR_AGENT_SESSIONS_ATTEMPT = 'agent_sessions.attempt';
const ATTR_AGENT_SESSIONS_SUPERSEDED = 'agent_sessions.superseded';

/** How much of a payload an attribute holds (CONTRACT.md). */
const OTLP_PAYLOAD_BYTES = 64 * 1024;

/** Stands for the root span in its id's hash: our span ids (`inv-3.att-1.7`) never take this form. */
const ROOT_MARKER = 'invoke_agent';

/** Our providers by the semantic conventions' well-known names; another is passed as it is. */
const PROVIDER_NAMES: Record<string, string> = {
  openai: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  anthropic: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  bedrock: GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
};

// One resource and one scope object for every span: the serializer groups spans into
// ResourceSpans and ScopeSpans by object identity, so the export holds one of each.
const RESOURCE = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'agent-sessions' });
const SCOPE = { name: 'agent-sessions' };

/** The invocation's trace id: 32 hex digits, the same on every export. */
export function otlpTraceId(organizationId: string, invocationKey: string): string {
  return derivedId(`${organizationId}\n${invocationKey}`, 16);
}

/** The OTLP span id of one of our spans, or of the root when `spanId` is null: 16 hex digits, the same on every export. */
export function otlpSpanId(organizationId: string, invocationKey: string, spanId: string | null): string {
  return derivedId(`${organizationId}\n${invocationKey}\n${spanId ?? ROOT_MARKER}`, 8);
}

/** The first `bytes` bytes of the text's SHA-256, in hex; never all zero, which OTLP reads as "no id". */
function derivedId(text: string, bytes: number): string {
  const id = createHash('sha256').update(text, 'utf8').digest().subarray(0, bytes);
  if (id.every((byte) => byte === 0)) id[bytes - 1] = 1;
  return id.toString('hex');
}

/** The body of an OTLP/HTTP export (`ExportTraceServiceRequest`, protobuf) holding the invocation's trace. */
export function otlpTraceRequest(input: OtlpTraceInput): Uint8Array {
  const body = ProtobufTraceSerializer.serializeRequest(readableSpans(input));
  // The protobuf serializer always answers; the interface it shares with the JSON one allows it not to.
  if (!body) throw new Error('the OTLP serializer produced no body');
  return body;
}

/** The root and one span per recorded span, shaped as the SDK's finished spans the serializer reads. */
function readableSpans({ organizationId, invocation, attempts, spans, payloads }: OtlpTraceInput): ReadableSpan[] {
  const key = invocation.invocation_key;
  const traceId = otlpTraceId(organizationId, key);
  const rootId = otlpSpanId(organizationId, key, null);
  const known = new Set(spans.map((span) => span.id));
  // Reduced rather than spread into Math.max: a long trace could pass its argument limit.
  const latestAttempt = [...attempts.map((attempt) => attempt.number), ...spans.map((span) => span.attempt)].reduce((a, b) => Math.max(a, b), 0);
  const attemptEnds = new Map(attempts.map((attempt) => [attempt.number, attempt.ended_at]));
  const provider = invocation.model ? (PROVIDER_NAMES[invocation.model.provider] ?? invocation.model.provider) : undefined;

  const rootStart = millis(invocation.started_at);
  // A running invocation has no end yet: its root ends where its latest span does.
  const rootEnd = invocation.ended_at ? millis(invocation.ended_at) : spans.reduce((end, span) => Math.max(end, millis(span.ended_at ?? span.started_at)), rootStart);
  const root = readableSpan({
    traceId,
    spanId: rootId,
    // INTERNAL, not SERVER: the root is the agent's run inside the service, which starts
    // after the request that accepted it has been answered (and may outlive it by
    // minutes); the GenAI conventions use INTERNAL for an agent invoked in process.
    kind: SpanKind.INTERNAL,
    name: `invoke_agent ${invocation.agent_name}`,
    start: rootStart,
    end: rootEnd,
    status:
      invocation.status === 'FAILED'
        ? { code: SpanStatusCode.ERROR, ...(invocation.failure ? { message: invocation.failure.message } : {}) }
        : { code: invocation.status === 'SUCCEEDED' ? SpanStatusCode.OK : SpanStatusCode.UNSET },
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_AGENT_NAME]: invocation.agent_name,
      [ATTR_GEN_AI_CONVERSATION_ID]: invocation.session_id,
      [ATTR_AGENT_SESSIONS_INVOCATION_KEY]: key,
      [ATTR_AGENT_SESSIONS_REVISION]: invocation.agent_revision,
      ...(invocation.status === 'FAILED' && invocation.failure ? { [ATTR_ERROR_TYPE]: invocation.failure.kind } : {}),
    },
  });

  const children = spans.map((span) => {
    const start = millis(span.started_at);
    // A span cut off with its attempt has no end of its own: it ends when its attempt did
    // (else when the invocation did), never before it started.
    const cutOff = span.ended_at === undefined || span.status === 'RUNNING';
    const endedAt = span.ended_at ?? attemptEnds.get(span.attempt) ?? invocation.ended_at;
    const end = Math.max(start, endedAt ? millis(endedAt) : start);
    const status: SpanStatus = cutOff
      ? { code: SpanStatusCode.ERROR, message: `cut off when attempt ${span.attempt} ended` }
      : { code: span.status === 'SUCCEEDED' ? SpanStatusCode.OK : SpanStatusCode.ERROR };
    const parentId = span.parent_id !== null && span.parent_id !== span.id && known.has(span.parent_id) ? otlpSpanId(organizationId, key, span.parent_id) : rootId;
    const common: Attributes = {
      [ATTR_AGENT_SESSIONS_ATTEMPT]: span.attempt,
      [ATTR_AGENT_SESSIONS_SUPERSEDED]: span.attempt !== latestAttempt,
      ...(payloads && span.input !== undefined ? { [ATTR_GEN_AI_INPUT_MESSAGES]: utf8Prefix(span.input, OTLP_PAYLOAD_BYTES) } : {}),
      ...(payloads && span.output !== undefined ? { [ATTR_GEN_AI_OUTPUT_MESSAGES]: utf8Prefix(span.output, OTLP_PAYLOAD_BYTES) } : {}),
    };
    const shape =
      span.type === 'model_call'
        ? {
            name: `chat ${span.name}`,
            // CLIENT: a model call is a request to the provider's API.
            kind: SpanKind.CLIENT,
            attributes: {
              [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
              ...(provider ? { [ATTR_GEN_AI_PROVIDER_NAME]: provider } : {}),
              [ATTR_GEN_AI_REQUEST_MODEL]: span.name,
              [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: span.usage?.input_tokens ?? 0,
              [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: span.usage?.output_tokens ?? 0,
            },
          }
        : {
            name: `execute_tool ${span.name}`,
            kind: SpanKind.INTERNAL,
            attributes: { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL, [ATTR_GEN_AI_TOOL_NAME]: span.name },
          };
    return readableSpan({
      traceId,
      spanId: otlpSpanId(organizationId, key, span.id),
      parentId,
      kind: shape.kind,
      name: shape.name,
      start,
      end,
      status,
      attributes: { ...shape.attributes, ...common },
    });
  });
  return [root, ...children];
}

interface SpanFacts {
  traceId: string;
  spanId: string;
  parentId?: string;
  kind: SpanKind;
  name: string;
  start: number;
  end: number;
  status: SpanStatus;
  attributes: Attributes;
}

/** A finished span as the SDK would hand it to an exporter, with nothing dropped, no events and no links. */
function readableSpan({ traceId, spanId, parentId, kind, name, start, end, status, attributes }: SpanFacts): ReadableSpan {
  const context: SpanContext = { traceId, spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name,
    kind,
    spanContext: () => context,
    ...(parentId ? { parentSpanContext: { traceId, spanId: parentId, traceFlags: TraceFlags.SAMPLED, isRemote: false } } : {}),
    startTime: hrTime(start),
    endTime: hrTime(end),
    duration: hrTime(end - start),
    status,
    attributes,
    links: [],
    events: [],
    ended: true,
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function millis(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not an ISO time: ${iso}`);
  return ms;
}

/** Milliseconds as [seconds, nanoseconds]: our times are exact to the millisecond. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, (ms - seconds * 1000) * 1_000_000];
}

/** The text cut to at most `max` bytes of UTF-8, without splitting a character. */
function utf8Prefix(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = max;
  // The first byte left out continues a character: leave out that character's start too.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
