/**
 * A scriptable Anthropic Messages API server on 127.0.0.1 for tests that drive the real
 * SDK over real HTTP. Queue replies with `enqueue(answer('hi'), toolUse('add', {a: 1}),
 * status(529), ...)`; each request to `/v1/messages` takes the next one. With the queue
 * empty it answers with the last user text. Every request is recorded with its headers.
 */
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { delay as scriptedDelay, hang as scriptedHang, lastUserText, startScriptedModel, type JsonRequest, type Scripted } from './scripted-model';

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Usage reported when a reply does not say. */
export const DEFAULT_USAGE: FakeUsage = { input_tokens: 21, output_tokens: 5 };

/** What the model answers, before timing. */
type ModelReply =
  | { kind: 'answer'; text: string; usage: FakeUsage }
  | { kind: 'tool_use'; text: string | null; calls: { name: string; input: unknown }[]; usage: FakeUsage }
  | { kind: 'status'; status: number; body: unknown; headers: Record<string, string> };

export type Reply = Scripted<ModelReply>;

export type RecordedRequest = JsonRequest<MessageCreateParamsNonStreaming>;

export interface FakeAnthropicServer {
  /** Base URL for the SDK (no `/v1`: the SDK adds it). */
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: Reply[]): void;
  /** Closes the server and any connection still open (hanging or delayed replies). */
  close(): Promise<void>;
}

/** A plain text answer. */
export function answer(text: string, usage: FakeUsage = DEFAULT_USAGE): Reply {
  return { kind: 'answer', text, usage };
}

/** One tool_use block, optionally after some text. */
export function toolUse(name: string, input: unknown = {}, options: { text?: string; usage?: FakeUsage } = {}): Reply {
  return { kind: 'tool_use', text: options.text ?? null, calls: [{ name, input }], usage: options.usage ?? DEFAULT_USAGE };
}

/** Several tool_use blocks in one reply. */
export function toolUses(calls: { name: string; input: unknown }[], usage: FakeUsage = DEFAULT_USAGE): Reply {
  return { kind: 'tool_use', text: null, calls, usage };
}

/** An error status with an Anthropic-style error body (or the given one). */
export function status(code: number, body?: unknown, headers: Record<string, string> = {}): Reply {
  const type = code === 429 ? 'rate_limit_error' : code === 529 ? 'overloaded_error' : code === 401 ? 'authentication_error' : 'api_error';
  return { kind: 'status', status: code, body: body ?? { type: 'error', error: { type, message: `scripted ${code}` } }, headers };
}

/** The reply, sent after `ms` milliseconds. */
export const delay: (ms: number, reply: Reply) => Reply = scriptedDelay;

/** Never answers (until the server closes). */
export const hang: () => Reply = scriptedHang;

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeAnthropic(): Promise<FakeAnthropicServer> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  let messages = 0;

  const message = (body: MessageCreateParamsNonStreaming, reply: Extract<ModelReply, { usage: FakeUsage }>) => {
    messages += 1;
    const content =
      reply.kind === 'answer'
        ? [{ type: 'text', text: reply.text, citations: null }]
        : [
            ...(reply.text ? [{ type: 'text', text: reply.text, citations: null }] : []),
            ...reply.calls.map((call, index) => ({ type: 'tool_use', id: `toolu_${messages}_${index + 1}`, name: call.name, input: call.input })),
          ];
    return {
      id: `msg_${messages}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: reply.kind === 'answer' ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: { ...reply.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
  };

  const server = await startScriptedModel({
    invalidJson: { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'request body is not valid JSON' } } },
    render: (reply: ModelReply, body: MessageCreateParamsNonStreaming) => (reply.kind === 'status' ? reply : { status: 200, body: message(body, reply) }),
    handle: ({ request, send, play }) => {
      requests.push(request);
      if (request.method !== 'POST' || request.path !== '/v1/messages') {
        return send({ status: 404, body: { type: 'error', error: { type: 'not_found_error', message: `no route ${request.method} ${request.path}` } } });
      }
      play(queue.shift() ?? answer(lastUserText(request.body?.messages, (block) => (block.type === 'text' ? block.text : undefined))));
    },
  });

  return {
    url: server.origin,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    close: server.close,
  };
}
