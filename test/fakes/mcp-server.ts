/**
 * A real MCP server (the SDK's McpServer over its Streamable HTTP transport, stateless)
 * on 127.0.0.1 for tests of the MCP tools. Its tools: `add`, `echo`, `fail` (answers
 * with isError), `picture` (an image part beside a text part), `whoami` (the
 * Authorization header it received, to prove redaction), `deep__echo` and `sleep`. It lists its tools
 * two per page, so every client must follow `nextCursor`. It answers on any path. Every
 * HTTP request's method, path and headers are recorded.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export const PAGE_SIZE = 2;
export const FAKE_TOOLS = ['add', 'echo', 'fail', 'picture', 'whoami', 'deep__echo', 'sleep'];

export interface RecordedMcpRequest {
  method: string;
  /** Path and query string. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The JSON-RPC method of a POST (`initialize`, `tools/list`, `tools/call`, ...). */
  rpc?: string;
}

export interface FakeMcpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:4321/mcp`. */
  url: string;
  requests: RecordedMcpRequest[];
  /** Idempotent; closes open connections too, so the server becomes unreachable. */
  close(): Promise<void>;
}

function buildServer(headers: IncomingHttpHeaders): McpServer {
  const mcp = new McpServer({ name: 'fake-mcp', version: '1.0.0' });
  mcp.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  mcp.registerTool('echo', { description: 'Says the text back.', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [
      { type: 'text', text },
      { type: 'text', text: '(echoed)' },
    ],
  }));
  mcp.registerTool('fail', { description: 'Always fails.' }, async () => ({
    content: [{ type: 'text', text: 'the fake tool failed on purpose' }],
    isError: true,
  }));
  mcp.registerTool('picture', { description: 'A caption and a tiny image.' }, async () => ({
    content: [
      { type: 'text', text: 'a dot' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ],
  }));
  mcp.registerTool('whoami', { description: 'Tells which Authorization header the server received.' }, async () => ({
    content: [{ type: 'text', text: `you sent ${headers.authorization ?? 'no authorization'}` }],
  }));
  // A name with the separator in it, as MCP allows: `<server>__deep__echo` may collide.
  mcp.registerTool('deep__echo', { description: 'Says the text back, from deeper.', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `deep ${text}` }],
  }));
  mcp.registerTool('sleep', { description: 'Answers after ms milliseconds.', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await sleep(ms);
    return { content: [{ type: 'text', text: 'awake' }] };
  });
  // The SDK lists every tool at once; this server pages them to exercise clients' paging.
  const handlers = (mcp.server as unknown as { _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<ListToolsResult>> })._requestHandlers;
  const listAll = handlers.get('tools/list')!;
  mcp.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const { tools } = await listAll(request, extra);
    const start = Number(request.params?.cursor ?? 0);
    const next = start + PAGE_SIZE;
    return { tools: tools.slice(start, next), ...(next < tools.length ? { nextCursor: String(next) } : {}) };
  });
  return mcp;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeMcp(): Promise<FakeMcpServer> {
  const requests: RecordedMcpRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, rpc: (body as { method?: string } | undefined)?.method });
      if (request.method !== 'POST') {
        // Stateless: no standalone event stream to resume, no session to delete.
        response.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      // Stateless mode: a server and a transport per request, as the SDK documents it.
      const mcp = buildServer(request.headers);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      mcp
        .connect(transport)
        .then(() => transport.handleRequest(request, response, body))
        .catch(() => {
          if (!response.headersSent) response.writeHead(500).end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    requests,
    close: async () => {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
