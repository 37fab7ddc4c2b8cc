/**
 * A fake web search backend on 127.0.0.1 speaking three dialects: SearXNG's JSON API
 * (`GET /search?q=&format=json`), Brave Search (`GET /res/v1/web/search?q=&count=`) and
 * Tavily (`POST /search` with a JSON body). Each answers `RESULT_COUNT` results for the
 * query in its own response shape; `failNext(status, body)` scripts one error answer.
 * Every request is recorded with its headers and body.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const RESULT_COUNT = 8;

export interface RecordedSearch {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeSearchServer {
  /** The base URL every provider's `url` is set to, e.g. `http://127.0.0.1:4321`. */
  url: string;
  requests: RecordedSearch[];
  /** The next request is answered with this status and body (text or JSON). */
  failNext(status: number, body?: unknown): void;
  close(): Promise<void>;
}

/** The n-th fake result for a query (from 1). */
export function fakeResult(query: string, n: number) {
  return { title: `${query} result ${n}`, url: `https://example.test/${encodeURIComponent(query)}/${n}`, text: `About ${query}, part ${n}.` };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' }).end(text);
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeSearch(): Promise<FakeSearchServer> {
  const requests: RecordedSearch[] = [];
  const failures: { status: number; body: unknown }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // Kept as text: a test can see what was sent.
      }
      const query = Object.fromEntries(url.searchParams);
      requests.push({ method: request.method ?? '', path: url.pathname, query, headers: request.headers, body });
      const failure = failures.shift();
      if (failure) return send(response, failure.status, failure.body ?? '');

      const results = (q: string) => Array.from({ length: RESULT_COUNT }, (_, i) => fakeResult(q, i + 1));
      // Routed by the path's end: a base URL may have a path of its own.
      if (request.method === 'GET' && url.pathname.endsWith('/search') && query.format === 'json') {
        // SearXNG: `content` is the snippet; extra fields as a real instance sends them.
        return send(response, 200, { query: query.q, number_of_results: RESULT_COUNT, results: results(query.q ?? '').map((r) => ({ title: r.title, url: r.url, content: r.text, engine: 'fake', score: 1 })) });
      }
      if (request.method === 'GET' && url.pathname.endsWith('/res/v1/web/search')) {
        return send(response, 200, { type: 'search', query: { original: query.q }, web: { type: 'search', results: results(query.q ?? '').map((r) => ({ title: r.title, url: r.url, description: r.text })) } });
      }
      if (request.method === 'POST' && url.pathname.endsWith('/search')) {
        const q = (body as { query?: string } | undefined)?.query ?? '';
        return send(response, 200, { query: q, results: results(q).map((r) => ({ title: r.title, url: r.url, content: r.text, score: 0.9 })), response_time: 0.1 });
      }
      send(response, 404, { error: `no route ${request.method} ${url.pathname}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    failNext: (status, body) => void failures.push({ status, body }),
    close: async () => {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
