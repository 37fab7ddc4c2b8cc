/**
 * A scriptable OpenAI-compatible Chat Completions server on 127.0.0.1 for tests that
 * drive a real SDK over real HTTP. Queue replies with `enqueue(answer('hi'),
 * toolCall('terminal', {command: 'ls'}), status(500), ...)`; each request to
 * `/v1/chat/completions` (or `/chat/completions`) takes the next one. With the queue
 * empty it answers with the last user message. Every request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Usage reported when a reply does not say. */
export const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 12, completion_tokens: 3 };

export type Reply =
  | { kind: 'answer'; text: string; usage: FakeUsage }
  | { kind: 'tool_calls'; calls: { name: string; arguments: string }[]; usage: FakeUsage }
  | { kind: 'status'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'delay'; ms: number; reply: Reply }
  | { kind: 'hang' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: ChatCompletionCreateParamsNonStreaming;
}

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
export function delay(ms: number, reply: Reply): Reply {
  return { kind: 'delay', ms, reply };
}

/** Never answers (until the server closes). */
export function hang(): Reply {
  return { kind: 'hang' };
}

function sendJson(response: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

function lastUserText(body: ChatCompletionCreateParamsNonStreaming): string {
  const last = body.messages?.findLast((message) => message.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeOpenAI(): Promise<FakeOpenAIServer> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let completions = 0;

  const completion = (body: ChatCompletionCreateParamsNonStreaming, reply: Extract<Reply, { usage: FakeUsage }>) => {
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

  const respond = (response: ServerResponse, body: ChatCompletionCreateParamsNonStreaming, reply: Reply): void => {
    switch (reply.kind) {
      case 'hang':
        return;
      case 'delay': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          respond(response, body, reply.reply);
        }, reply.ms);
        timers.add(timer);
        return;
      }
      case 'status':
        return sendJson(response, reply.status, reply.body, reply.headers);
      default:
        return sendJson(response, 200, completion(body, reply));
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      let body: ChatCompletionCreateParamsNonStreaming;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return sendJson(response, 400, { error: { message: 'request body is not valid JSON', type: 'invalid_request_error' } });
      }
      requests.push({ method: request.method ?? '', path, headers: request.headers, body });
      if (request.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/chat/completions')) {
        return sendJson(response, 404, { error: { message: `no route ${request.method} ${path}`, type: 'invalid_request_error' } });
      }
      respond(response, body, queue.shift() ?? answer(lastUserText(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${origin}/v1`,
    origin,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    // Idempotent, so a test may close early to make the endpoint unreachable.
    close: async () => {
      if (!server.listening) return;
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
