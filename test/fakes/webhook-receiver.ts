/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (headers, raw body,
 * arrival time) and answers with scripted status codes, then 200; a URL with
 * `?status=NNN` is always answered NNN. Verify signatures with
 * the `standardwebhooks` verifier on what it recorded.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  status: number;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Statuses for the next requests, in order; 200 once they are used up. */
  script(...statuses: number[]): void;
  /** The status every request gets once the script is used up (default 200). */
  answer(status: number): void;
  /** Waits until `count` requests arrived (those `filter` keeps, if given). */
  waitFor(count: number, options?: { timeoutMs?: number; filter?: (hook: ReceivedWebhook) => boolean }): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const script: number[] = [];
  let fallback = 200;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // A URL that asks for a status always gets it (`?status=500`), whatever the script says.
      const asked = Number(new URL(req.url ?? '/', 'http://receiver').searchParams.get('status'));
      const status = asked || (script.shift() ?? fallback);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status, receivedAt: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'try again');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    script: (...statuses) => void script.push(...statuses),
    answer: (status) => {
      fallback = status;
    },
    async waitFor(count, { timeoutMs = 20_000, filter = () => true } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter(filter);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) throw new Error(`expected ${count} webhook requests, got ${matching.length}`);
        await sleep(20);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
