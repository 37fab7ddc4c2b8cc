/**
 * A scriptable OpenAI-compatible Chat Completions server on 127.0.0.1 for tests that
 * drive a real SDK over real HTTP. Queue replies with `enqueue(answer('hi'),
 * toolCall('terminal', {command: 'ls'}), status(500), ...)`; each request to
 * `/v1/chat/completions` (or `/chat/completions`) takes the next one. With the queue
 * empty it answers with the last user message. Every request is recorded.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { delay as scriptedDelay, hang as scriptedHang, lastUserText, startScriptedModel, type JsonRequest, type Scripted } from './scripted-model';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Usage reported when a reply does not say. */
export const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 12, completion_tokens: 3 };

/** What the model answers, before timing. */
type ModelReply =
  | { kind: 'answer'; text: string; usage: FakeUsage }
  | { kind: 'tool_calls'; calls: { name: string; arguments: string }[]; usage: FakeUsage }
  | { kind: 'status'; status: number; body: unknown; headers: Record<string, string> };

export type Reply = Scripted<ModelReply>;

export type RecordedRequest = JsonRequest<ChatCompletionCreateParamsNonStreaming>;

export interface FakeOpenAIServer {
  /** Base URL for the SDK, ending in `/v1`. */
  url: string;
  /** The same server without `/v1`, for clients configured with a bare origin. */
  origin: string;
  requests: RecordedRequest[];
  enqueue(...replies: Reply[]): void;
  /** Closes the server and any connection still open (hanging or delayed replies). */
  close(): Promise<void>;
}

/** A plain text answer. */
export function answer(text: string, usage: FakeUsage = DEFAULT_USAGE): Reply {
  return { kind: 'answer', text, usage };
}

/** One function call; `args` is sent as JSON, or verbatim when it is a string (to script invalid JSON). */
export function toolCall(name: string, args: unknown = {}, usage: FakeUsage = DEFAULT_USAGE): Reply {
  return toolCalls([{ name, args }], usage);
}

/** Several function calls in one reply. */
export function toolCalls(calls: { name: string; args: unknown }[], usage: FakeUsage = DEFAULT_USAGE): Reply {
  return {
    kind: 'tool_calls',
    calls: calls.map(({ name, args }) => ({ name, arguments: typeof args === 'string' ? args : JSON.stringify(args) })),
    usage,
  };
}

/** An error status with an OpenAI-style error body (or the given one). */
export function status(code: number, body?: unknown, headers: Record<string, string> = {}): Reply {
  return { kind: 'status', status: code, body: body ?? { error: { message: `scripted ${code}`, type: 'server_error', code: null } }, headers };
}

/** The reply, sent after `ms` milliseconds. */
export const delay: (ms: number, reply: Reply) => Reply = scriptedDelay;

/** Never answers (until the server closes). */
export const hang: () => Reply = scriptedHang;

const ROUTES = new Set(['/v1/chat/completions', '/chat/completions']);

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeOpenAI(): Promise<FakeOpenAIServer> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  let completions = 0;

  const completion = (body: ChatCompletionCreateParamsNonStreaming, reply: Extract<ModelReply, { usage: FakeUsage }>) => {
    completions += 1;
    const message =
      reply.kind === 'answer'
        ? { role: 'assistant', content: reply.text, refusal: null }
        : {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: reply.calls.map((call, index) => ({
              id: `call_${completions}_${index + 1}`,
              type: 'function',
              function: call,
            })),
          };
    return {
      id: `chatcmpl-${completions}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: reply.kind === 'answer' ? 'stop' : 'tool_calls' }],
      usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens },
    };
  };

  const server = await startScriptedModel({
    invalidJson: { status: 400, body: { error: { message: 'request body is not valid JSON', type: 'invalid_request_error' } } },
    render: (reply: ModelReply, body: ChatCompletionCreateParamsNonStreaming) => (reply.kind === 'status' ? reply : { status: 200, body: completion(body, reply) }),
    handle: ({ request, send, play }) => {
      requests.push(request);
      if (request.method !== 'POST' || !ROUTES.has(request.path)) {
        return send({ status: 404, body: { error: { message: `no route ${request.method} ${request.path}`, type: 'invalid_request_error' } } });
      }
      play(queue.shift() ?? answer(lastUserText(request.body?.messages)));
    },
  });

  return {
    url: `${server.origin}/v1`,
    origin: server.origin,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    close: server.close,
  };
}
