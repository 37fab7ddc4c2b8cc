/**
 * A scriptable Anthropic Messages API server on 127.0.0.1 for tests that drive the real
 * SDK over real HTTP. Queue replies with `enqueue(answer('hi'), toolUse('add', {a: 1}),
 * status(529), ...)`; each request to `/v1/messages` takes the next one. With the queue
 * empty it answers with the last user text. Every request is recorded with its headers.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Usage reported when a reply does not say. */
export const DEFAULT_USAGE: FakeUsage = { input_tokens: 21, output_tokens: 5 };

export type Reply =
  | { kind: 'answer'; text: string; usage: FakeUsage }
  | { kind: 'tool_use'; text: string | null; calls: { name: string; input: unknown }[]; usage: FakeUsage }
  | { kind: 'status'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'delay'; ms: number; reply: Reply }
  | { kind: 'hang' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: MessageCreateParamsNonStreaming;
}

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

function lastUserText(body: MessageCreateParamsNonStreaming): string {
  const last = body.messages?.findLast((message) => message.role === 'user');
  if (typeof last?.content === 'string') return last.content;
  const texts = (last?.content ?? []).flatMap((block) => (block.type === 'text' ? [block.text] : []));
  return texts.length ? texts.join('') : JSON.stringify(last?.content ?? '');
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeAnthropic(): Promise<FakeAnthropicServer> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let messages = 0;

  const message = (body: MessageCreateParamsNonStreaming, reply: Extract<Reply, { usage: FakeUsage }>) => {
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

  const respond = (response: ServerResponse, body: MessageCreateParamsNonStreaming, reply: Reply): void => {
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
        return sendJson(response, 200, message(body, reply));
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      let body: MessageCreateParamsNonStreaming;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return sendJson(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'request body is not valid JSON' } });
      }
      requests.push({ method: request.method ?? '', path, headers: request.headers, body });
      if (request.method !== 'POST' || path !== '/v1/messages') {
        return sendJson(response, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${request.method} ${path}` } });
      }
      respond(response, body, queue.shift() ?? answer(lastUserText(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
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
