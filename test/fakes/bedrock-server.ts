/**
 * A scriptable Bedrock Runtime Converse endpoint on 127.0.0.1 (`POST /model/{modelId}/converse`,
 * JSON) for tests that drive the real SDK over real HTTP. The SDK's Bedrock client speaks
 * HTTP/2, so this is an HTTP/2 server without TLS.
 *
 * Replies are queued per model id; with a model's queue empty it answers with the last user
 * text. Every request is recorded under its model id. The Bedrock endpoint is one per
 * process (AWS_ENDPOINT_URL_BEDROCK_RUNTIME), so the integration run starts one fake in
 * global-setup and test files script it over HTTP with `connectFakeBedrock`, each under
 * model ids of its own.
 */
import { connect, createServer, type Http2ServerResponse, type Http2Session, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Usage reported when a reply does not say. */
export const DEFAULT_USAGE: FakeUsage = { inputTokens: 17, outputTokens: 4 };

/** Plain JSON, so a test file can queue it in another process. */
export type Reply =
  | { kind: 'answer'; text: string; usage: FakeUsage }
  | { kind: 'tool_use'; text: string | null; calls: { name: string; input: unknown }[]; usage: FakeUsage }
  | { kind: 'error'; status: number; type: string; message: string }
  | { kind: 'delay'; ms: number; reply: Reply }
  | { kind: 'hang' };

export interface RecordedRequest {
  modelId: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FakeBedrockServer {
  /** For AWS_ENDPOINT_URL_BEDROCK_RUNTIME. */
  endpoint: string;
  /** Requests so far to `modelId`'s Converse route. */
  requests(modelId: string): RecordedRequest[];
  enqueue(modelId: string, ...replies: Reply[]): void;
  /** Closes the server and every connection still open. */
  close(): Promise<void>;
}

/** A plain text answer. */
export function answer(text: string, usage: FakeUsage = DEFAULT_USAGE): Reply {
  return { kind: 'answer', text, usage };
}

/** One toolUse block, optionally after some text. */
export function toolUse(name: string, input: unknown = {}, options: { text?: string; usage?: FakeUsage } = {}): Reply {
  return { kind: 'tool_use', text: options.text ?? null, calls: [{ name, input }], usage: options.usage ?? DEFAULT_USAGE };
}

/** A service error: `type` travels as `x-amzn-errortype`, as Bedrock sends it. */
export function error(status: number, type: string, message = `scripted ${type}`): Reply {
  return { kind: 'error', status, type, message };
}

/** The reply, sent after `ms` milliseconds. */
export function delay(ms: number, reply: Reply): Reply {
  return { kind: 'delay', ms, reply };
}

/** Never answers (until the server closes). */
export function hang(): Reply {
  return { kind: 'hang' };
}

function sendJson(response: Http2ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed || response.stream.closed) return;
  const text = JSON.stringify(body);
  response.writeHead(code, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  response.end(text);
}

function lastUserText(body: any): string {
  const last = (body?.messages ?? []).findLast((message: { role: string }) => message.role === 'user');
  const texts = (last?.content ?? []).flatMap((block: { text?: string }) => (block.text !== undefined ? [block.text] : []));
  return texts.length ? texts.join('') : JSON.stringify(last?.content ?? '');
}

const CONVERSE = /^\/model\/([^/]+)\/converse$/;
const CONTROL = /^\/_fake\/models\/([^/]+)\/(replies|requests)$/;

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeBedrock(): Promise<FakeBedrockServer> {
  const queues = new Map<string, Reply[]>();
  const recorded = new Map<string, RecordedRequest[]>();
  const timers = new Set<NodeJS.Timeout>();
  const sessions = new Set<Http2Session>();
  let responses = 0;

  const requestsOf = (modelId: string) => recorded.get(modelId) ?? [];
  const enqueue = (modelId: string, ...replies: Reply[]) => void queues.set(modelId, [...(queues.get(modelId) ?? []), ...replies]);

  const converse = (reply: Extract<Reply, { usage: FakeUsage }>) => {
    responses += 1;
    const content =
      reply.kind === 'answer'
        ? [{ text: reply.text }]
        : [
            ...(reply.text ? [{ text: reply.text }] : []),
            ...reply.calls.map((call, index) => ({ toolUse: { toolUseId: `tooluse_${responses}_${index + 1}`, name: call.name, input: call.input } })),
          ];
    const { inputTokens, outputTokens } = reply.usage;
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: reply.kind === 'answer' ? 'end_turn' : 'tool_use',
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      metrics: { latencyMs: 1 },
    };
  };

  const respond = (response: Http2ServerResponse, reply: Reply): void => {
    switch (reply.kind) {
      case 'hang':
        return;
      case 'delay': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          respond(response, reply.reply);
        }, reply.ms);
        timers.add(timer);
        return;
      }
      case 'error':
        return sendJson(response, reply.status, { message: reply.message }, { 'x-amzn-errortype': reply.type });
      default:
        return sendJson(response, 200, converse(reply));
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return sendJson(response, 400, { message: 'request body is not valid JSON' }, { 'x-amzn-errortype': 'ValidationException' });
      }
      const control = CONTROL.exec(path);
      if (control) {
        const modelId = decodeURIComponent(control[1]!);
        if (control[2] === 'requests' && request.method === 'GET') return sendJson(response, 200, requestsOf(modelId));
        if (control[2] === 'replies' && request.method === 'POST') {
          enqueue(modelId, ...(body as Reply[]));
          return sendJson(response, 200, {});
        }
      }
      const route = CONVERSE.exec(path);
      if (request.method !== 'POST' || !route) {
        return sendJson(response, 404, { message: `no route ${request.method} ${path}` }, { 'x-amzn-errortype': 'UnknownOperationException' });
      }
      const modelId = decodeURIComponent(route[1]!);
      recorded.set(modelId, [...requestsOf(modelId), { modelId, path, headers: request.headers, body }]);
      respond(response, queues.get(modelId)?.shift() ?? answer(lastUserText(body)));
    });
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: requestsOf,
    enqueue,
    close: async () => {
      if (!server.listening) return;
      for (const timer of timers) clearTimeout(timer);
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve, reject) => server.close((failure) => (failure ? reject(failure) : resolve())));
    },
  };
}

/** One request to the fake's control routes over HTTP/2; the parsed JSON answer. */
async function control(endpoint: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const session = connect(endpoint);
  try {
    return await new Promise((resolve, reject) => {
      session.once('error', reject);
      const stream = session.request({ ':method': method, ':path': path, 'content-type': 'application/json' });
      const chunks: Buffer[] = [];
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (status !== 200) reject(new Error(`fake bedrock answered ${status}: ${text}`));
        else resolve(JSON.parse(text));
      });
      stream.end(body === undefined ? undefined : JSON.stringify(body));
    });
  } finally {
    session.close();
  }
}

/** The fake at `endpoint`, scripted from another process. */
export function connectFakeBedrock(endpoint: string) {
  const path = (modelId: string, what: 'replies' | 'requests') => `/_fake/models/${encodeURIComponent(modelId)}/${what}`;
  return {
    enqueue: async (modelId: string, ...replies: Reply[]): Promise<void> => void (await control(endpoint, 'POST', path(modelId, 'replies'), replies)),
    requests: async (modelId: string): Promise<RecordedRequest[]> => (await control(endpoint, 'GET', path(modelId, 'requests'))) as RecordedRequest[],
  };
}
