import { readFile } from 'node:fs/promises';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { queryPrefix } from '#data/dynamo';
import { keys } from '#data/keys';
import { getJson, payloadKey } from '#data/payloads';
import { startFakeMcp, type FakeMcpServer } from '../fakes/mcp-server';
import { answer, startFakeOpenAI, toolCall, toolCalls, type FakeOpenAIServer } from '../fakes/openai-server';
import { fakeResult, startFakeSearch, type FakeSearchServer } from '../fakes/search-server';
import { newOrganization, request } from './support';

// Runs over HTTP through the local cloud whose agents search the web and call MCP tools,
// against fakes of the model, the search providers and an MCP server (the SDK's own).
const CANARY = `canary-${Date.now()}-tool-secret-4d2b`;

let model: FakeOpenAIServer;
let search: FakeSearchServer;
let mcp: FakeMcpServer;
let closedMcpUrl: string;

beforeAll(async () => {
  [model, search, mcp] = await Promise.all([startFakeOpenAI(), startFakeSearch(), startFakeMcp()]);
  const closed = await startFakeMcp();
  await closed.close();
  closedMcpUrl = closed.url;
});

afterAll(async () => {
  await Promise.all([model.close(), search.close(), mcp.close()]);
});

const modelConfig = () => ({ name: 'gpt-fake', provider: { name: 'openai', url: model.url } });

async function organization() {
  const org = await newOrganization();
  for (const name of ['MCP_TOKEN', 'SEARCH_KEY']) {
    const created = await request('POST', '/secrets', { token: org.token, body: { name, value: CANARY } });
    expect(created.status).toBe(201);
  }
  return org;
}

async function run(token: string, sessionId: string, key: string, agent: Record<string, unknown>) {
  const from = model.requests.length;
  const response = await request('POST', `/sessions/${sessionId}`, {
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: 'Use your tools.', agent_name: 'tooled', agent: { model: modelConfig(), ...agent } },
  });
  return { response, modelRequests: model.requests.slice(from) };
}

/** The spans of an invocation (oldest first), each with its input and output payloads. */
async function trace(organizationId: string, key: string): Promise<Record<string, any>[]> {
  const spans = await queryPrefix(keys.spansOf(organizationId, key), { consistent: true });
  return Promise.all(
    spans.map(async (span) => ({
      ...span,
      input: JSON.parse((await getJson(payloadKey(organizationId, key, span.id as string, 'input'))) ?? 'null'),
      output: JSON.parse((await getJson(payloadKey(organizationId, key, span.id as string, 'output'))) ?? 'null'),
    })),
  );
}

/** Everything recorded or answered about a session: API responses, span items and payloads. */
async function recorded(organizationId: string, token: string, sessionId: string, key: string): Promise<string> {
  const session = await request('GET', `/sessions/${sessionId}`, { token });
  const audit = await request('GET', `/sessions/${sessionId}/audit`, { token });
  expect(session.status).toBe(200);
  expect(audit.status).toBe(200);
  return JSON.stringify([session.body, audit.body, await trace(organizationId, key)]);
}

const toolNames = (body: ChatCompletionCreateParamsNonStreaming) => (body.tools ?? []).map((t) => (t.type === 'function' ? t.function.name : t.type));

describe('an agent with web_search', () => {
  it('gets SearXNG results back as the tool result', async () => {
    const { token, organizationId } = await organization();
    model.enqueue(toolCall('web_search', { query: 'tide tables', count: 2 }), answer('Found them.'));

    const { response, modelRequests } = await run(token, 'searching', 'ws1', { tools: { web_search: { provider: 'searxng', url: search.url, max_results: 3 } } });

    expect(response.status).toBe(200);
    expect(response.body.message.content).toBe('Found them.');
    expect(toolNames(modelRequests[0]!.body)).toEqual(['web_search']);
    const results = [1, 2].map((n) => ({ title: fakeResult('tide tables', n).title, url: fakeResult('tide tables', n).url, snippet: fakeResult('tide tables', n).text }));
    const toolMessage = modelRequests[1]!.body.messages.find((m) => m.role === 'tool');
    expect(JSON.parse(toolMessage!.content as string)).toEqual({ results });
    expect(search.requests.at(-1)).toMatchObject({ method: 'GET', path: '/search', query: { q: 'tide tables', format: 'json' } });
    const spans = await trace(organizationId, 'ws1');
    expect(spans.map((s) => [s.span_type, s.name, s.status])).toEqual([
      ['model_call', 'gpt-fake', 'SUCCEEDED'],
      ['tool_call', 'web_search', 'SUCCEEDED'],
      ['model_call', 'gpt-fake', 'SUCCEEDED'],
    ]);
    expect(spans[1]!.output).toEqual({ results });
  });

  it('refuses at acceptance a SearXNG without url and a Brave without credential', async () => {
    const { token } = await organization();

    const searxng = await run(token, 'refused', 'r1', { tools: { web_search: { provider: 'searxng' } } });
    const brave = await run(token, 'refused', 'r2', { tools: { web_search: { provider: 'brave' } } });

    expect(searxng.response.status).toBe(400);
    expect(searxng.response.body.message).toContain('agent.tools.web_search.url');
    expect(brave.response.status).toBe(400);
    expect(brave.response.body.message).toContain('agent.tools.web_search.credential');
    expect(searxng.modelRequests).toHaveLength(0);
    expect((await request('GET', '/sessions/refused', { token })).status).toBe(404);
  });
});

describe('an agent with MCP servers', () => {
  it('is offered <server>__<tool>, calls one and gets its result', async () => {
    const { token, organizationId } = await organization();
    model.enqueue(toolCall('calc__add', { a: 2, b: 3 }), answer('It is 5.'));

    const { response, modelRequests } = await run(token, 'mcp', 'm1', { mcp_servers: [{ name: 'calc', url: mcp.url }] });

    expect(response.status).toBe(200);
    expect(response.body.message.content).toBe('It is 5.');
    expect(toolNames(modelRequests[0]!.body)).toEqual(['calc__add', 'calc__echo', 'calc__fail', 'calc__picture', 'calc__whoami', 'calc__deep__echo', 'calc__sleep']);
    expect(modelRequests[0]!.body.tools![0]).toMatchObject({ function: { description: 'Adds two numbers.', parameters: { properties: { a: { type: 'number' } } } } });
    expect(modelRequests[1]!.body.messages.find((m) => m.role === 'tool')).toMatchObject({ content: '5' });
    expect((await trace(organizationId, 'm1')).map((s) => [s.name, s.status])).toEqual([
      ['gpt-fake', 'SUCCEEDED'],
      ['calc__add', 'SUCCEEDED'],
      ['gpt-fake', 'SUCCEEDED'],
    ]);
  });

  it('offers only allowed_tools, and an isError result is a FAILED tool call the model is told about', async () => {
    const { token, organizationId } = await organization();
    model.enqueue(toolCall('calc__fail'), answer('It failed.'));

    const { response, modelRequests } = await run(token, 'allowed', 'a1', {
      mcp_servers: [
        { name: 'calc', url: mcp.url, allowed_tools: ['fail', 'echo'] },
        { name: 'silent', url: mcp.url, allowed_tools: [] },
      ],
    });

    expect(response.status).toBe(200);
    expect(toolNames(modelRequests[0]!.body)).toEqual(['calc__echo', 'calc__fail']);
    expect(JSON.parse(modelRequests[1]!.body.messages.find((m) => m.role === 'tool')!.content as string)).toEqual({ error: 'the fake tool failed on purpose' });
    const failed = (await trace(organizationId, 'a1'))[1]!;
    expect(failed).toMatchObject({ span_type: 'tool_call', name: 'calc__fail', status: 'FAILED', output: { error: 'the fake tool failed on purpose' } });
  });

  it('completes the run with an unreachable server: told in the system prompt, its tool call FAILED with the reason', async () => {
    const { token, organizationId } = await organization();
    model.enqueue(toolCall('down__add', { a: 1, b: 2 }), answer('The calculator is down.'));

    const { response, modelRequests } = await run(token, 'down', 'd1', {
      system_prompt: 'Be brief.',
      mcp_servers: [{ name: 'down', url: closedMcpUrl, allowed_tools: ['add'] }],
    });

    expect(response.status).toBe(200);
    expect(response.body.message.content).toBe('The calculator is down.');
    const system = modelRequests[0]!.body.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/^Be brief\.\n\nThe MCP server down could not be reached \(.+\), so its tools are not available in this attempt\.$/);
    const spans = await trace(organizationId, 'd1');
    expect(spans.map((s) => [s.span_type, s.name, s.status])).toEqual([
      ['model_call', 'gpt-fake', 'SUCCEEDED'],
      ['tool_call', 'down__add', 'FAILED'],
      ['model_call', 'gpt-fake', 'SUCCEEDED'],
    ]);
    expect(spans[1]!.output.error).toMatch(/^MCP server down could not be reached when this attempt's tools were opened: /);
    const audit = (await request('GET', '/sessions/down/audit', { token })).body.events;
    expect(audit.find((e: { type: string }) => e.type === 'tool_result').payload).toMatchObject({ tool: 'down__add', status: 'FAILED' });
    expect(audit.at(-1).type).toBe('run_succeeded');
  });
});

describe('secret values used by tools', () => {
  it('reach the MCP server (url and header) and the search providers, and nothing recorded or answered', async () => {
    const { token, organizationId } = await organization();
    const mcpFrom = mcp.requests.length;
    const searchFrom = search.requests.length;

    // whoami answers the Authorization header it received: the secret comes back as a tool result.
    model.enqueue(toolCalls([{ name: 'calc__whoami', args: {} }, { name: 'calc__echo', args: { text: 'hello' } }]), answer('Done.'));
    const viaMcp = await run(token, 'secret-mcp', 's1', {
      mcp_servers: [{ name: 'calc', url: `${mcp.url}?key={{secret:MCP_TOKEN}}`, headers: { Authorization: 'Bearer {{secret:MCP_TOKEN}}' } }],
    });
    model.enqueue(toolCall('web_search', { query: 'brave' }), answer('Done.'));
    const viaBrave = await run(token, 'secret-brave', 's2', { tools: { web_search: { provider: 'brave', url: search.url, credential: '{{secret:SEARCH_KEY}}' } } });
    // A provider error body echoing the credential is no way out either.
    search.failNext(401, `token ${CANARY} is not valid`);
    model.enqueue(toolCall('web_search', { query: 'tavily' }), answer('Done.'));
    const viaTavily = await run(token, 'secret-tavily', 's3', { tools: { web_search: { provider: 'tavily', url: search.url, credential: '{{secret:SEARCH_KEY}}' } } });

    for (const { response } of [viaMcp, viaBrave, viaTavily]) expect(response.status).toBe(200);
    const mcpPosts = mcp.requests.slice(mcpFrom).filter((r) => r.method === 'POST');
    expect(mcpPosts.length).toBeGreaterThan(0);
    for (const post of mcpPosts) expect([post.url, post.headers.authorization]).toEqual([`/mcp?key=${CANARY}`, `Bearer ${CANARY}`]);
    expect(search.requests[searchFrom]!.headers['x-subscription-token']).toBe(CANARY);
    expect(search.requests[searchFrom + 1]!.headers.authorization).toBe(`Bearer ${CANARY}`);
    // The model saw the secret replaced, in the tool result and in the tool error.
    expect(viaMcp.modelRequests[1]!.body.messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'you sent Bearer [REDACTED:MCP_TOKEN]' });
    expect(viaTavily.modelRequests[1]!.body.messages.find((m) => m.role === 'tool')!.content).toContain('web search (tavily) answered HTTP 401');
    for (const { modelRequests } of [viaMcp, viaBrave, viaTavily]) expect(JSON.stringify(modelRequests.map((r) => r.body))).not.toContain(CANARY);

    const everything = [
      await recorded(organizationId, token, 'secret-mcp', 's1'),
      await recorded(organizationId, token, 'secret-brave', 's2'),
      await recorded(organizationId, token, 'secret-tavily', 's3'),
    ].join('\n');
    expect(everything).toContain('[REDACTED:MCP_TOKEN]');
    expect(everything).toContain('calc__whoami');
    expect(everything).not.toContain(CANARY);
    const log = await readFile(inject('serviceLogFile'), 'utf8');
    expect(log).toContain('"invocation_key":"s3"');
    expect(log).not.toContain(CANARY);
  });
});
