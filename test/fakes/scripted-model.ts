/**
 * What the scripted model fakes (openai-server, anthropic-server, bedrock-server) share: a
 * JSON server on 127.0.0.1, HTTP/1.1 or HTTP/2 without TLS, that reads each request's JSON
 * body and hands it to the fake; replies played with their delays and hangs; and a close
 * that also ends every connection a hanging or delayed reply keeps open. A fake supplies
 * only what its API does differently: its routes and queues, how a reply looks in its API's
 * shape, its error bodies and where the last user text is.
 */
import { createServer as createHttp1Server, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo, Server } from 'node:net';

/** The replies about timing, which every fake understands the same way. */
type Timing<Final> = { kind: 'delay'; ms: number; reply: Scripted<Final> } | { kind: 'hang' };

/** A fake's own replies (`Final`, in its API's terms), or a timing one. */
export type Scripted<Final> = Final | Timing<Final>;

/** The reply, sent after `ms` milliseconds. */
export function delay<Final>(ms: number, reply: Scripted<Final>): Scripted<Final> {
  return { kind: 'delay', ms, reply };
}

/** Never answers (until the server closes). */
export function hang<Final>(): Scripted<Final> {
  return { kind: 'hang' };
}

/** A request as the fake sees it: its JSON body parsed (an empty body is `null`). */
export interface JsonRequest<Body> {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Body;
}

/** An HTTP answer with a JSON body. */
export interface JsonAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** One request in flight, for a fake's `handle`. */
export interface Exchange<Final, Body> {
  request: JsonRequest<Body>;
  /** Answers now. */
  send(answer: JsonAnswer): void;
  /** Answers with a scripted reply, rendered by the fake's `render`, after its delays; never for a hang. */
  play(reply: Scripted<Final>): void;
}

export interface ScriptedModelOptions<Final, Body> {
  /** HTTP/2 without TLS (the AWS SDK's Bedrock client speaks it); HTTP/1.1 otherwise. */
  http2?: boolean;
  /** The answer to a body that is not JSON, in the API's error shape. */
  invalidJson: JsonAnswer;
  /** The API's answer for one of the fake's own replies to `body`. */
  render(reply: Final, body: Body): JsonAnswer;
  /** Routes a request with a JSON body: records it, answers it or plays a reply. */
  handle(exchange: Exchange<Final, Body>): void;
}

export interface ScriptedModelServer {
  /** `http://127.0.0.1:{port}`. */
  origin: string;
  /** Closes the server and any connection still open (hanging or delayed replies); idempotent, so a test may close early to make the endpoint unreachable. */
  close(): Promise<void>;
}

type Response = ServerResponse | Http2ServerResponse;

function sendJson(response: Response, { status, body, headers = {} }: JsonAnswer): void {
  if (response.destroyed || ('stream' in response && response.stream.closed)) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  response.end(text);
}

function isTiming<Final>(reply: Scripted<Final>): reply is Timing<Final> {
  const { kind } = reply as { kind?: unknown };
  return kind === 'delay' || kind === 'hang';
}

/** The server and how to end its open connections: HTTP/1.1 closes them all, HTTP/2 destroys every session. */
function serve(http2: boolean, listener: (request: IncomingMessage | Http2ServerRequest, response: Response) => void): { server: Server; endConnections(): void } {
  if (!http2) {
    const server = createHttp1Server(listener);
    return { server, endConnections: () => server.closeAllConnections() };
  }
  const server = createHttp2Server(listener);
  const sessions = new Set<Http2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  return { server, endConnections: () => sessions.forEach((session) => session.destroy()) };
}

/** Starts a fake model server on a free port of 127.0.0.1. */
export async function startScriptedModel<Final, Body>(options: ScriptedModelOptions<Final, Body>): Promise<ScriptedModelServer> {
  const timers = new Set<NodeJS.Timeout>();

  const { server, endConnections } = serve(options.http2 ?? false, (incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const send = (answer: JsonAnswer) => sendJson(response, answer);
      const path = (incoming.url ?? '/').split('?')[0]!;
      let body: Body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return send(options.invalidJson);
      }
      const play = (reply: Scripted<Final>): void => {
        if (!isTiming(reply)) return send(options.render(reply as Final, body));
        if (reply.kind === 'hang') return;
        const timer = setTimeout(() => {
          timers.delete(timer);
          play(reply.reply);
        }, reply.ms);
        timers.add(timer);
      };
      options.handle({ request: { method: incoming.method ?? '', path, headers: incoming.headers, body }, send, play });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      if (!server.listening) return;
      for (const timer of timers) clearTimeout(timer);
      endConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/**
 * The last user message's text, the answer a fake gives with its queue empty: string content
 * as it is, else the texts `textOf` finds in its blocks, joined; else the content as JSON.
 */
export function lastUserText(messages: readonly { role: string; content?: unknown }[] | undefined, textOf: (block: any) => string | undefined = () => undefined): string {
  const content = messages?.findLast((message) => message.role === 'user')?.content;
  if (typeof content === 'string') return content;
  const texts = (Array.isArray(content) ? content : []).flatMap((block) => textOf(block) ?? []);
  return texts.length ? texts.join('') : JSON.stringify(content ?? '');
}
