import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentConfig } from '#contracts/agent';
import { createRedactor } from '#functions/agent/secrets';
import { mcpToolSet, openMcpServers, type McpOptions } from '#functions/agent/tools/mcp';
import type { ToolboxContext, ToolSet } from '#functions/agent/tools/types';
import { FAKE_TOOLS, PAGE_SIZE, startFakeMcp, type FakeMcpServer } from '../fakes/mcp-server';

// The MCP tools against a real MCP server (the SDK's own) over Streamable HTTP.
const TOKEN = 'mcp-token-canary-93ab7e';
const context = { signal: new AbortController().signal };

function options(overrides: Partial<McpOptions> = {}): McpOptions {
  const secrets = new Map([['MCP_TOKEN', TOKEN]]);
  return { secrets, redactor: createRedactor(secrets), signal: new AbortController().signal, connectTimeoutMs: 5_000, callTimeoutMs: 5_000, ...overrides };
}

async function closedUrl(): Promise<string> {
  const server = await startFakeMcp();
  await server.close();
  return server.url;
}

describe('MCP server tools', () => {
  let mcp: FakeMcpServer;
  const opened: ToolSet[] = [];

  const open = async (...args: Parameters<typeof openMcpServers>) => {
    const set = await openMcpServers(...args);
    opened.push(set);
    return set;
  };
  const tool = (set: ToolSet, name: string) => set.tools.find((t) => t.name === name)!;

  beforeAll(async () => {
    mcp = await startFakeMcp();
  });

  afterAll(() => mcp.close());

  beforeEach(() => {
    mcp.requests.length = 0;
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((set) => set.close?.()));
  });

  it('lists every page of tools as <server>__<tool> with the server description and schema, url and headers resolved', async () => {
    const set = await open([{ name: 'fake', url: `${mcp.url}?key={{secret:MCP_TOKEN}}`, headers: { Authorization: 'Bearer {{secret:MCP_TOKEN}}', 'X-Team': 'blue' } }], options());

    expect(set.tools.map((t) => t.name)).toEqual(FAKE_TOOLS.map((name) => `fake__${name}`));
    expect(mcp.requests.filter((r) => r.rpc === 'tools/list')).toHaveLength(Math.ceil(FAKE_TOOLS.length / PAGE_SIZE));
    expect(tool(set, 'fake__add')).toMatchObject({
      description: 'Adds two numbers.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    });
    expect(set.instructions).toEqual([]);
    const posts = mcp.requests.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) {
      expect(post.url).toBe(`/mcp?key=${TOKEN}`);
      expect(post.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-team': 'blue' });
    }
  });

  it('offers only allowed_tools, and contacts a server whose allowed_tools is [] not at all', async () => {
    const set = await open(
      [
        { name: 'some', url: mcp.url, allowed_tools: ['echo', 'add', 'not-there'] },
        { name: 'none', url: mcp.url, allowed_tools: [] },
      ],
      options(),
    );

    expect(set.tools.map((t) => t.name)).toEqual(['some__add', 'some__echo']);
    expect(mcp.requests.filter((r) => r.rpc === 'initialize')).toHaveLength(1);
  });

  it('leaves out tools whose names models cannot call or another server already has, and says so', async () => {
    const long = 's'.repeat(60);
    const set = await open(
      [
        { name: 'calc', url: mcp.url, allowed_tools: ['deep__echo'] },
        { name: 'calc__deep', url: mcp.url, allowed_tools: ['echo', 'add'] },
        { name: long, url: mcp.url },
      ],
      options(),
    );

    expect(set.tools.map((t) => t.name)).toEqual(['calc__deep__echo', 'calc__deep__add']);
    expect(await tool(set, 'calc__deep__echo').call({ text: 'x' }, context)).toBe('deep x');
    expect(set.instructions).toEqual([
      "The MCP server calc__deep has tools named like another server's (echo); they are left out.",
      `The MCP server ${long} has tools whose names models cannot call (${FAKE_TOOLS.join(', ')}); they are left out.`,
    ]);
  });

  it('calls a tool and answers its text parts joined, other parts as JSON', async () => {
    const set = await open([{ name: 'fake', url: mcp.url }], options());

    expect(await tool(set, 'fake__add').call({ a: 2, b: 3 }, context)).toBe('5');
    expect(await tool(set, 'fake__echo').call({ text: 'hi' }, context)).toBe('hi\n(echoed)');
    expect(await tool(set, 'fake__picture').call({}, context)).toBe('a dot\n{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}');
    expect(mcp.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(3);
  });

  it('throws the text of an isError result, and refuses arguments that are not an object', async () => {
    const set = await open([{ name: 'fake', url: mcp.url }], options());

    await expect(tool(set, 'fake__fail').call({}, context)).rejects.toThrow('the fake tool failed on purpose');
    await expect(tool(set, 'fake__add').call([1, 2], context)).rejects.toThrow('the arguments must be a JSON object');
  });

  it('turns a server gone after opening into a clear error of the call', async () => {
    const doomed = await startFakeMcp();
    const set = await open([{ name: 'doomed', url: doomed.url }], options());
    await doomed.close();

    await expect(tool(set, 'doomed__add').call({ a: 1, b: 1 }, context)).rejects.toThrow(/^MCP server doomed failed during add: fetch failed \(.+\)$/);
  });

  it('bounds a call by its timeout', async () => {
    const set = await open([{ name: 'fake', url: mcp.url }], options({ callTimeoutMs: 100 }));

    await expect(tool(set, 'fake__sleep').call({ ms: 2_000 }, context)).rejects.toThrow('MCP server fake: sleep did not answer within 0.1 s');
  });

  it('keeps going without an unreachable server: told in the instructions, its named tools failing with the reason', async () => {
    const down = await closedUrl();

    const set = await open(
      [
        { name: 'down', url: down, allowed_tools: ['add'] },
        { name: 'gone', url: down },
        { name: 'fake', url: mcp.url, allowed_tools: ['add'] },
      ],
      options(),
    );

    expect(set.tools.map((t) => t.name)).toEqual(['down__add', 'fake__add']);
    expect(set.instructions).toHaveLength(2);
    expect(set.instructions[0]).toMatch(/^The MCP server down could not be reached \(.*ECONNREFUSED.*\), so its tools are not available in this attempt\.$/);
    expect(set.instructions[1]).toMatch(/^The MCP server gone could not be reached/);
    await expect(tool(set, 'down__add').call({ a: 1, b: 2 }, context)).rejects.toThrow(
      /^MCP server down could not be reached when this attempt's tools were opened: .*ECONNREFUSED/,
    );
    expect(await tool(set, 'fake__add').call({ a: 1, b: 2 }, context)).toBe('3');
  });

  it('never shows a header secret in the reason a server is unavailable', async () => {
    // A header value fetch refuses: its error message quotes the value.
    const set = await open([{ name: 'bad', url: mcp.url, headers: { Authorization: 'Bearer {{secret:MCP_TOKEN}}\nX' }, allowed_tools: ['add'] }], options());

    expect(set.instructions).toHaveLength(1);
    expect(set.instructions[0]).toContain('[REDACTED:MCP_TOKEN]');
    expect(set.instructions[0]).not.toContain(TOKEN);
    const error = (await tool(set, 'bad__add').call({}, context).catch((e: Error) => e)) as Error;
    expect(error.message).toContain('could not be reached');
    expect(error.message).not.toContain(TOKEN);
  });

  describe('against a server that never answers', () => {
    let silent: Server;
    let silentUrl: string;

    beforeAll(async () => {
      silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
    });

    afterAll(async () => {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('gives up connecting after its timeout', async () => {
      const set = await open([{ name: 'mute', url: silentUrl }], options({ connectTimeoutMs: 100 }));

      expect(set.tools).toEqual([]);
      expect(set.instructions).toEqual(['The MCP server mute could not be reached (no answer within 0.1 s), so its tools are not available in this attempt.']);
    });

    it('stops opening when the attempt is being stopped', async () => {
      const stop = new AbortController();
      const pending = openMcpServers([{ name: 'mute', url: silentUrl }], options({ signal: stop.signal }));
      stop.abort(new Error('attempt stopped'));

      await expect(pending).rejects.toThrow('attempt stopped');
    });
  });

  it('is opened by the toolbox only when servers are configured', async () => {
    const model = { name: 'm', provider: { name: 'openai' } };
    const toolbox = { secrets: new Map(), redactor: createRedactor(new Map()), signal: context.signal } as unknown as ToolboxContext;

    const set = await mcpToolSet(AgentConfig.parse({ model, mcp_servers: [{ name: 'fake', url: mcp.url, allowed_tools: ['echo'] }] }), toolbox);
    opened.push(set!);

    expect(set!.tools.map((t) => t.name)).toEqual(['fake__echo']);
    expect(await mcpToolSet(AgentConfig.parse({ model }), toolbox)).toBeUndefined();
    expect(await mcpToolSet(AgentConfig.parse({ model, mcp_servers: [] }), toolbox)).toBeUndefined();
  });
});
