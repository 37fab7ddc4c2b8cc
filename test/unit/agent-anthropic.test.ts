import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProvider } from '#functions/agent/providers/index';
import type { ModelRequest } from '#functions/agent/types';
import { answer, hang, startFakeAnthropic, status, toolUse, toolUses, type FakeAnthropicServer } from '../fakes/anthropic-server';
import { failure } from './provider-failure';

const KEY = 'sk-ant-test-0123456789abcdefghij';
const request: ModelRequest = { model: 'claude-test', messages: [{ role: 'user', content: 'Hello' }], tools: [] };
// The server's own pause before a retry: keeps the SDK's backoff out of the test's time.
const SOON = { 'retry-after-ms': '10' };

let server: FakeAnthropicServer;

beforeEach(async () => {
  server = await startFakeAnthropic();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const provider = (credential: string | null = KEY, timeoutMs?: number) =>
  createProvider({ name: 'anthropic', url: server.url }, credential ?? undefined, timeoutMs ? { timeoutMs } : {});


describe('the anthropic provider', () => {
  it('maps a conversation with tool calls and results to the Messages API and the reply back', async () => {
    server.enqueue(toolUse('add', { a: 1 }, { text: 'Let me add.', usage: { input_tokens: 30, output_tokens: 7 } }));
    const full: ModelRequest = {
      model: 'claude-test',
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Add twice' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', name: 'add', arguments: '{"a":0}' },
            { id: 'c2', name: 'add', arguments: '{"a":2}' },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"sum":0}' },
        { role: 'tool', tool_call_id: 'c2', content: '{"sum":2}' },
        { role: 'assistant', content: 'It is 0 and 2.' },
        { role: 'user', content: 'Again' },
      ],
      tools: [{ name: 'add', description: 'Adds.', parameters: { type: 'object', properties: { a: { type: 'number' } } } }],
    };

    const response = await provider().complete(full);

    const sent = server.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toEqual(provider().body(full));
    expect(sent.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Add twice' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'c1', name: 'add', input: { a: 0 } },
            { type: 'tool_use', id: 'c2', name: 'add', input: { a: 2 } },
          ],
        },
        // Consecutive tool results share one user message.
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: '{"sum":0}' },
            { type: 'tool_result', tool_use_id: 'c2', content: '{"sum":2}' },
          ],
        },
        { role: 'assistant', content: 'It is 0 and 2.' },
        { role: 'user', content: 'Again' },
      ],
      tools: [{ name: 'add', description: 'Adds.', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }],
    });
    expect(response).toMatchObject({
      text: 'Let me add.',
      toolCalls: [{ id: 'toolu_1_1', name: 'add', arguments: '{"a":1}' }],
      usage: { input_tokens: 30, output_tokens: 7 },
      response: { id: 'msg_1', type: 'message', stop_reason: 'tool_use' },
    });
  });

  it('returns several tool calls, and no text when the model only called tools', async () => {
    server.enqueue(toolUses([{ name: 'a', input: {} }, { name: 'b', input: { x: [1] } }]));

    const response = await provider().complete(request);

    expect(response.text).toBeNull();
    expect(response.toolCalls.map((call) => [call.name, call.arguments])).toEqual([
      ['a', '{}'],
      ['b', '{"x":[1]}'],
    ]);
  });

  it('keeps the history sendable: no empty text, a follow-up merged into the same user turn', async () => {
    await provider().complete({
      ...request,
      messages: [
        { role: 'user', content: 'Answer in JSON' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'That was not JSON.' },
      ],
    });

    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Answer in JSON' }, { type: 'text', text: 'That was not JSON.' }] },
    ]);
  });

  it('asks for a JSON Schema answer when a response format is given', async () => {
    await provider().complete({ ...request, responseFormat: { type: 'json_schema', schema: { type: 'object' } } });

    expect(server.requests[0]!.body.output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object' } } });
  });

  it('sends the credential as x-api-key only, and no key header without one', async () => {
    await provider().complete(request);
    await provider(null).complete(request);

    expect(server.requests[0]!.headers['x-api-key']).toBe(KEY);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(server.requests[0]!.headers['anthropic-version']).toBeDefined();
    expect(server.requests[1]!.headers['x-api-key']).toBeUndefined();
    expect(server.requests[1]!.headers.authorization).toBeUndefined();
  });

  it('ignores ANTHROPIC_* variables of the process', async () => {
    vi.stubEnv('ANTHROPIC_BASE_URL', 'http://127.0.0.1:9');
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-from-the-environment');
    vi.stubEnv('ANTHROPIC_AUTH_TOKEN', 'token-from-the-environment');
    vi.stubEnv('ANTHROPIC_CUSTOM_HEADERS', 'X-Leak: environment\nanthropic-beta: surprise');

    const response = await provider(null).complete(request);

    expect(response.text).toBe('Hello');
    const { headers } = server.requests[0]!;
    expect(JSON.stringify(headers)).not.toMatch(/environment|surprise/);
    expect(headers['x-leak']).toBeUndefined();
    expect(headers['anthropic-beta']).toBeUndefined();
  });

  it('retries a rate limit and an overload inside the call', async () => {
    server.enqueue(status(429, undefined, SOON), status(529, undefined, SOON), answer('fine'));

    const response = await provider().complete(request);

    expect(response.text).toBe('fine');
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after three tries of a server error, as retryable', async () => {
    server.enqueue(status(500, undefined, SOON), status(503, undefined, SOON), status(529, undefined, SOON));

    const error = await failure(provider().complete(request));

    expect(error).toMatchObject({ provider: 'anthropic', status: 529, retryable: true });
    expect(error.message).toBe('anthropic answered HTTP 529 overloaded_error: scripted 529');
    expect(server.requests).toHaveLength(3);
  });

  it('fails for good on a refused credential, without the key in the message', async () => {
    server.enqueue(status(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` } }));

    const error = await failure(provider().complete(request));

    expect(error).toMatchObject({ name: 'ProviderError', provider: 'anthropic', status: 401, retryable: false });
    expect(error.message).toBe('anthropic answered HTTP 401 authentication_error: invalid x-api-key [REDACTED]');
    expect(error.message).not.toContain(KEY);
    expect(server.requests).toHaveLength(1);
  });

  it.each([400, 403, 404])('does not retry HTTP %i', async (code) => {
    server.enqueue(status(code));

    const error = await failure(provider().complete(request));

    expect(error).toMatchObject({ status: code, retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it.each([408, 409])('counts HTTP %i as retryable', async (code) => {
    server.enqueue(status(code, undefined, SOON), status(code, undefined, SOON), status(code, undefined, SOON));

    expect(await failure(provider().complete(request))).toMatchObject({ status: code, retryable: true });
  });

  it('gives up on a server that does not answer in time, as retryable', async () => {
    server.enqueue(hang(), hang(), hang());

    const error = await failure(provider(KEY, 100).complete(request));

    expect(error).toMatchObject({ retryable: true, status: undefined, message: 'anthropic did not answer in time' });
    expect(server.requests).toHaveLength(3);
  });

  it('reports an unreachable endpoint as retryable', async () => {
    await server.close();

    const error = await failure(provider().complete(request));

    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect(error.message).toMatch(/^anthropic could not be reached/);
  });

  it('lets a caller abort the call, which is not a provider failure', async () => {
    server.enqueue(hang());
    const controller = new AbortController();
    const call = provider().complete(request, controller.signal);
    setTimeout(() => controller.abort(), 50);

    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
  });
});
