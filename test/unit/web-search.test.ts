import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentConfig, referencedSecrets } from '#contracts/agent';
import { createWebSearchTool, webSearchToolSet } from '#functions/agent/tools/web-search';
import type { ToolboxContext } from '#functions/agent/tools/types';
import { fakeResult, RESULT_COUNT, startFakeSearch, type FakeSearchServer } from '../fakes/search-server';

// The web_search tool over real HTTP against a fake speaking each provider's dialect.
const KEY = 'search-key-canary-51f0c2';
const context = { signal: new AbortController().signal };
const model = { name: 'm', provider: { name: 'openai' } };

function expected(query: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const r = fakeResult(query, i + 1);
    return { title: r.title, url: r.url, snippet: r.text };
  });
}

describe('the web_search configuration', () => {
  it.each([
    ['searxng without url', { provider: 'searxng' }, 'tools.web_search.url', 'required for provider searxng'],
    ['brave without credential', { provider: 'brave' }, 'tools.web_search.credential', 'required for provider brave'],
    ['tavily without credential', { provider: 'tavily', url: 'http://127.0.0.1:1' }, 'tools.web_search.credential', 'required for provider tavily'],
    ['a literal credential', { provider: 'brave', credential: 'sk-literal' }, 'tools.web_search.credential', 'secret reference'],
    ['max_results above 20', { provider: 'searxng', url: 'http://127.0.0.1:1', max_results: 21 }, 'tools.web_search.max_results', ''],
    ['a malformed reference in the url', { provider: 'searxng', url: 'http://127.0.0.1:1/{{secret:a b}}' }, 'tools.web_search.url', 'malformed secret reference'],
  ])('refuses %s', (_case, webSearch, path, hint) => {
    const result = AgentConfig.safeParse({ model, tools: { web_search: webSearch } });

    expect(result.success).toBe(false);
    const issue = result.error!.issues[0]!;
    expect(issue.path.join('.')).toBe(path);
    expect(issue.message).toContain(hint);
  });

  it.each([
    ['searxng with a url and no credential', { provider: 'searxng', url: 'http://127.0.0.1:8080' }],
    ['brave with a credential and no url', { provider: 'brave', credential: '{{secret:BRAVE}}' }],
    ['tavily with a credential and max_results', { provider: 'tavily', credential: '{{secret:T}}', max_results: 20 }],
  ])('accepts %s', (_case, webSearch) => {
    expect(AgentConfig.safeParse({ model, tools: { web_search: webSearch } }).success).toBe(true);
  });

  it('lists the secrets referenced in tool urls among those the run needs', () => {
    const config = AgentConfig.parse({
      model,
      tools: { web_search: { provider: 'searxng', url: 'https://search.example/{{secret:SEARX_PATH}}' } },
      mcp_servers: [{ name: 'docs', url: 'https://mcp.example/mcp?key={{secret:MCP_KEY}}' }],
    });

    expect(referencedSecrets(config)).toEqual(['SEARX_PATH', 'MCP_KEY']);
  });
});

describe('the web_search tool', () => {
  let search: FakeSearchServer;

  beforeAll(async () => {
    search = await startFakeSearch();
  });

  afterAll(() => search.close());

  beforeEach(() => {
    search.requests.length = 0;
  });

  it('queries SearXNG JSON API and returns max_results normalized results (5 by default)', async () => {
    const tool = createWebSearchTool({ provider: 'searxng', url: `${search.url}/` }, undefined);

    const result = await tool.call({ query: 'tide tables' }, context);

    expect(result).toEqual({ results: expected('tide tables', 5) });
    expect(search.requests).toHaveLength(1);
    expect(search.requests[0]).toMatchObject({ method: 'GET', path: '/search', query: { q: 'tide tables', format: 'json' } });
    expect(search.requests[0]!.headers.authorization).toBeUndefined();
    expect(tool).toMatchObject({ name: 'web_search', parameters: { required: ['query'], properties: { count: { maximum: 5 } } } });
  });

  it('asks Brave for the count with the subscription token', async () => {
    const tool = createWebSearchTool({ provider: 'brave', url: search.url, credential: '{{secret:B}}', max_results: 7 }, KEY);

    const result = await tool.call({ query: 'otters', count: 3 }, context);

    expect(result).toEqual({ results: expected('otters', 3) });
    expect(search.requests[0]).toMatchObject({ method: 'GET', path: '/res/v1/web/search', query: { q: 'otters', count: '3' } });
    expect(search.requests[0]!.headers['x-subscription-token']).toBe(KEY);
  });

  it('posts to Tavily with a bearer credential, count capped by max_results', async () => {
    const tool = createWebSearchTool({ provider: 'tavily', url: search.url, credential: '{{secret:T}}', max_results: 6 }, KEY);

    const result = await tool.call({ query: 'lichens', count: 19 }, context);

    expect(result).toEqual({ results: expected('lichens', 6) });
    expect(search.requests[0]).toMatchObject({ method: 'POST', path: '/search', body: { query: 'lichens', max_results: 6 } });
    expect(search.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('returns every result when max_results exceeds what the provider has', async () => {
    const tool = createWebSearchTool({ provider: 'searxng', url: search.url, max_results: 20 }, undefined);

    expect(await tool.call({ query: 'all' }, context)).toEqual({ results: expected('all', RESULT_COUNT) });
  });

  it('turns an HTTP error into a message without the credential, even when the body echoes it', async () => {
    const tool = createWebSearchTool({ provider: 'brave', url: search.url, credential: '{{secret:B}}' }, KEY);
    search.failNext(401, { error: `invalid token ${KEY}` });

    const error = (await tool.call({ query: 'x' }, context).catch((e: Error) => e)) as Error;

    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/^web search \(brave\) answered HTTP 401: .*invalid token \[credential\]/);
    expect(error.message).not.toContain(KEY);
  });

  it('refuses a body that is not JSON', async () => {
    const tool = createWebSearchTool({ provider: 'searxng', url: search.url }, undefined);
    search.failNext(200, '<html>rate limited</html>');

    await expect(tool.call({ query: 'x' }, context)).rejects.toThrow('web search (searxng) answered with a body that is not JSON');
  });

  it('refuses arguments without a query before sending anything', async () => {
    const tool = createWebSearchTool({ provider: 'searxng', url: search.url }, undefined);

    await expect(tool.call({ count: 2 }, context)).rejects.toThrow('non-empty "query"');
    await expect(tool.call({ query: 'x', count: 0 }, context)).rejects.toThrow('"count" must be a positive integer');
    expect(search.requests).toHaveLength(0);
  });

  it('says an endpoint that cannot be reached could not be reached', async () => {
    const closed = await startFakeSearch();
    await closed.close();
    const tool = createWebSearchTool({ provider: 'tavily', url: closed.url, credential: '{{secret:T}}' }, KEY);

    await expect(tool.call({ query: 'x' }, context)).rejects.toThrow(/^web search \(tavily\) could not be reached: .*ECONNREFUSED/);
  });

  describe('against an endpoint that never answers', () => {
    let silent: Server;
    let silentUrl: string;

    beforeAll(async () => {
      silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('gives up after its timeout', async () => {
      const tool = createWebSearchTool({ provider: 'searxng', url: silentUrl }, undefined, { timeoutMs: 100 });

      await expect(tool.call({ query: 'x' }, context)).rejects.toThrow('web search (searxng) did not answer within 0.1 s');
    });

    it('stops when the attempt is being stopped, with the abort rather than a search error', async () => {
      const tool = createWebSearchTool({ provider: 'searxng', url: silentUrl }, undefined);
      const stop = new AbortController();

      const pending = tool.call({ query: 'x' }, { signal: stop.signal });
      stop.abort(new Error('attempt stopped'));

      await expect(pending).rejects.toThrow('attempt stopped');
    });
  });

  it('is opened by the toolbox with the url and credential references resolved, and not when unconfigured', async () => {
    const secrets = new Map([['BRAVE_KEY', KEY], ['PATH_TOKEN', 'tok123']]);
    const toolbox = { secrets, signal: context.signal } as unknown as ToolboxContext;
    const agent = AgentConfig.parse({ model, tools: { web_search: { provider: 'brave', url: `${search.url}/{{secret:PATH_TOKEN}}`, credential: '{{secret:BRAVE_KEY}}' } } });

    const set = await webSearchToolSet(agent, toolbox);
    const result = await set!.tools[0]!.call({ query: 'q' }, context);

    expect(set!.tools.map((t) => t.name)).toEqual(['web_search']);
    expect(result).toEqual({ results: expected('q', 5) });
    expect(search.requests[0]!.path).toBe('/tok123/res/v1/web/search');
    expect(search.requests[0]!.headers['x-subscription-token']).toBe(KEY);
    expect(await webSearchToolSet(AgentConfig.parse({ model }), toolbox)).toBeUndefined();
  });
});
