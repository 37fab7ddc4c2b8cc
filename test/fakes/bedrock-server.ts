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
import { connect, type IncomingHttpHeaders } from 'node:http2';
import { delay as scriptedDelay, hang as scriptedHang, lastUserText, startScriptedModel, type Scripted } from './scripted-model';

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Usage reported when a reply does not say. */
export const DEFAULT_USAGE: FakeUsage = { inputTokens: 17, outputTokens: 4 };

/** What the model answers, before timing. */
type ModelReply =
  | { kind: 'answer'; text: string; usage: FakeUsage }
  | { kind: 'tool_use'; text: string | null; calls: { name: string; input: unknown }[]; usage: FakeUsage }
  | { kind: 'error'; status: number; type: string; message: string };

/** Plain JSON, so a test file can queue it in another process. */
export type Reply = Scripted<ModelReply>;

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
export const delay: (ms: number, reply: Reply) => Reply = scriptedDelay;

/** Never answers (until the server closes). */
export const hang: () => Reply = scriptedHang;

const errorType = (type: string) => ({ 'x-amzn-errortype': type });

const CONVERSE = /^\/model\/([^/]+)\/converse$/;
const CONTROL = /^\/_fake\/models\/([^/]+)\/(replies|requests)$/;

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeBedrock(): Promise<FakeBedrockServer> {
  const queues = new Map<string, Reply[]>();
  const recorded = new Map<string, RecordedRequest[]>();
  let responses = 0;

  const requestsOf = (modelId: string) => recorded.get(modelId) ?? [];
  const enqueue = (modelId: string, ...replies: Reply[]) => void queues.set(modelId, [...(queues.get(modelId) ?? []), ...replies]);

  const converse = (reply: Extract<ModelReply, { usage: FakeUsage }>) => {
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

  const server = await startScriptedModel<ModelReply, RecordedRequest['body']>({
    http2: true,
    invalidJson: { status: 400, body: { message: 'request body is not valid JSON' }, headers: errorType('ValidationException') },
    render: (reply) =>
      reply.kind === 'error' ? { status: reply.status, body: { message: reply.message }, headers: errorType(reply.type) } : { status: 200, body: converse(reply) },
    handle: ({ request: { method, path, headers, body }, send, play }) => {
      const control = CONTROL.exec(path);
      if (control) {
        const modelId = decodeURIComponent(control[1]!);
        if (control[2] === 'requests' && method === 'GET') return send({ status: 200, body: requestsOf(modelId) });
        if (control[2] === 'replies' && method === 'POST') {
          enqueue(modelId, ...(body as Reply[]));
          return send({ status: 200, body: {} });
        }
      }
      const route = CONVERSE.exec(path);
      if (method !== 'POST' || !route) {
        return send({ status: 404, body: { message: `no route ${method} ${path}` }, headers: errorType('UnknownOperationException') });
      }
      const modelId = decodeURIComponent(route[1]!);
      recorded.set(modelId, [...requestsOf(modelId), { modelId, path, headers, body }]);
      play(queues.get(modelId)?.shift() ?? answer(lastUserText(body?.messages, (block) => block.text)));
    },
  });

  return {
    endpoint: server.origin,
    requests: requestsOf,
    enqueue,
    close: server.close,
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
