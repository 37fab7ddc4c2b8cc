/**
 * Counting what the service asks of each emulator, for the benchmarks: an HTTP proxy on
 * 127.0.0.1 in front of an endpoint that forwards every request unchanged and counts it
 * by service (the AWS JSON endpoint serves two, told apart by `X-Amz-Target`).
 */
import { Agent, createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  endpoint: string;
  stop(): Promise<void>;
}

/** Requests counted so far, by service name. */
export type RequestCounts = Record<string, number>;

/** Starts a proxy to `target` that adds each request to `counts` under the name `nameOf` gives it. */
export async function startCountingProxy(target: string, counts: RequestCounts, nameOf: (request: IncomingMessage) => string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const name = nameOf(request);
    counts[name] = (counts[name] ?? 0) + 1;
    const outgoing = forward(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    outgoing.on('error', () => response.destroy());
    request.pipe(outgoing);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** The service an AWS JSON request is for: the part of its `X-Amz-Target` before the dot. */
export function awsJsonService(request: IncomingMessage): string {
  const target = String(request.headers['x-amz-target'] ?? '');
  return target.startsWith('AWSStepFunctions.') ? 'stepfunctions' : target.startsWith('secretsmanager.') ? 'secretsmanager' : 'other';
}
