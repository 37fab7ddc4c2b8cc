import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentConfig } from '#contracts/agent';
import { AVAILABLE_PROVIDERS, isProviderAvailable } from '#functions/agent/providers/available';
import { createProvider } from '#functions/agent/providers/index';
import type { ModelRequest } from '#functions/agent/types';
import { answer, hang, startFakeOpenAI, status, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { failure } from './provider-failure';

const KEY = 'sk-test-0123456789abcdefghij';
const request: ModelRequest = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], tools: [] };

let server: FakeOpenAIServer;

beforeEach(async () => {
  server = await startFakeOpenAI();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});


describe('the openai provider', () => {
  it('maps a conversation with tools to Chat Completions and the reply back', async () => {
    const provider = createProvider({ name: 'openai', url: server.url }, KEY);
    server.enqueue(toolCall('add', { a: 1 }, { prompt_tokens: 30, completion_tokens: 7 }));
    const full: ModelRequest = {
      model: 'gpt-test',
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Add' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'add', arguments: '{"a":0}' }] },
        { role: 'tool', tool_call_id: 'c1', content: '{"sum":0}' },
        { role: 'assistant', content: 'It is 0.' },
        { role: 'user', content: 'Again' },
      ],
      tools: [{ name: 'add', description: 'Adds.', parameters: { type: 'object', properties: { a: { type: 'number' } } } }],
    };

    const response = await provider.complete(full);

    const sent = server.requests[0]!.body;
    expect(sent).toEqual(provider.body(full));
    expect(sent).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Add' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":0}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '{"sum":0}' },
        { role: 'assistant', content: 'It is 0.' },
        { role: 'user', content: 'Again' },
      ],
      tools: [{ type: 'function', function: { name: 'add', description: 'Adds.', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }],
    });
    expect(response).toMatchObject({
      text: null,
      toolCalls: [{ id: 'call_1_1', name: 'add', arguments: '{"a":1}' }],
      usage: { input_tokens: 30, output_tokens: 7 },
      response: { id: 'chatcmpl-1', object: 'chat.completion' },
    });
  });

  it('asks for a JSON Schema answer when a response format is given', async () => {
    const provider = createProvider({ name: 'openai', url: server.url }, KEY);

    await provider.complete({ ...request, responseFormat: { type: 'json_schema', schema: { type: 'object' } } });

    expect(server.requests[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } });
  });

  it('sends the credential as a bearer token, and no Authorization header without one', async () => {
    await createProvider({ name: 'openai', url: server.url }, KEY).complete(request);
    await createProvider({ name: 'openai', url: server.url }).complete(request);

    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[1]!.headers.authorization).toBeUndefined();
  });

  it('serves a base URL without /v1 and ignores OPENAI_* variables of the process', async () => {
    vi.stubEnv('OPENAI_BASE_URL', 'http://127.0.0.1:9/v1');
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-the-environment');
    vi.stubEnv('OPENAI_ORG_ID', 'org-from-the-environment');

    const response = await createProvider({ name: 'openai', url: server.origin }).complete(request);

    expect(response.text).toBe('Hello');
    expect(server.requests[0]!.path).toBe('/chat/completions');
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(server.requests[0]!.headers['openai-organization']).toBeUndefined();
  });

  it('retries a rate limit inside the call, as the server asks', async () => {
    server.enqueue(status(429, undefined, { 'retry-after-ms': '20' }), answer('fine'));

    const response = await createProvider({ name: 'openai', url: server.url }, KEY).complete(request);

    expect(response.text).toBe('fine');
    expect(server.requests).toHaveLength(2);
  });

  it('fails for good on a refused credential, without the key in the message', async () => {
    server.enqueue(status(401, { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' } }));

    const error = await failure(createProvider({ name: 'openai', url: server.url }, KEY).complete(request));

    expect(error).toMatchObject({ name: 'ProviderError', provider: 'openai', status: 401, retryable: false });
    expect(error.message).toBe('openai answered HTTP 401 Incorrect API key provided: [REDACTED]');
    expect(server.requests).toHaveLength(1);
  });

  it('gives up on a server that does not answer in time, as retryable', async () => {
    server.enqueue(hang(), hang(), hang());

    const error = await failure(createProvider({ name: 'openai', url: server.url }, KEY, { timeoutMs: 100 }).complete(request));

    expect(error).toMatchObject({ retryable: true, status: undefined, message: 'openai did not answer in time' });
    expect(server.requests).toHaveLength(3);
  });

  it('reports an unreachable endpoint as retryable', async () => {
    const url = server.url;
    await server.close();

    const error = await failure(createProvider({ name: 'openai', url }, KEY).complete(request));

    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect(error.message).toMatch(/^openai could not be reached/);
  });

  it('lets a caller abort the call, which is not a provider failure', async () => {
    server.enqueue(hang());
    const controller = new AbortController();
    const call = createProvider({ name: 'openai', url: server.url }, KEY).complete(request, controller.signal);
    setTimeout(() => controller.abort(), 50);

    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('createProvider', () => {
  it('offers every provider the configuration names', () => {
    expect(AgentConfig.shape.model.shape.provider.shape.name.options.filter((name) => !isProviderAvailable(name))).toEqual([]);
  });

  it('has a factory for every provider the run route accepts', () => {
    for (const name of AVAILABLE_PROVIDERS) expect(() => createProvider({ name })).not.toThrow();
  });
});
