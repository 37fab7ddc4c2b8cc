import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProvider } from '#functions/agent/providers/index';
import type { ModelRequest } from '#functions/agent/types';
import { answer, connectFakeBedrock, error, hang, startFakeBedrock, toolUse, type FakeBedrockServer } from '../fakes/bedrock-server';
import { failure } from './provider-failure';

// The client takes its endpoint, region and credentials from the environment, as in Lambda.
let server: FakeBedrockServer;

beforeAll(async () => {
  server = await startFakeBedrock();
  vi.stubEnv('AWS_ENDPOINT_URL_BEDROCK_RUNTIME', server.endpoint);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDLOCALTEST');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local-secret-access-key');
  vi.stubEnv('AWS_SESSION_TOKEN', '');
  vi.stubEnv('AWS_PROFILE', '');
  // A Bedrock API key in the environment must not replace the role's signature.
  vi.stubEnv('AWS_BEARER_TOKEN_BEDROCK', 'bedrock-api-key-from-the-environment');
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

// Each test its own model id: the fake queues and records per model.
let models = 0;
const nextModel = () => `anthropic.test-model-${++models}-v1:0`;
const request = (model: string): ModelRequest => ({ model, messages: [{ role: 'user', content: 'Hello' }], tools: [] });
const provider = (timeoutMs?: number) => createProvider({ name: 'bedrock' }, undefined, timeoutMs ? { timeoutMs } : {});


describe('the bedrock provider', () => {
  it('maps a conversation with tool calls and results to Converse and the reply back', async () => {
    const model = nextModel();
    server.enqueue(model, toolUse('add', { a: 1 }, { text: 'Adding.', usage: { inputTokens: 40, outputTokens: 9 } }));
    const full: ModelRequest = {
      model,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Add twice' },
        {
          role: 'assistant',
          content: 'On it.',
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

    const [sent] = server.requests(model);
    // The model id travels in the path; everything else in the body.
    expect(sent!.path).toBe(`/model/${encodeURIComponent(model)}/converse`);
    const { modelId, ...body } = provider().body(full) as { modelId: string };
    expect(modelId).toBe(model);
    expect(sent!.body).toEqual(body);
    expect(sent!.body).toEqual({
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 4096 },
      messages: [
        { role: 'user', content: [{ text: 'Add twice' }] },
        {
          role: 'assistant',
          content: [
            { text: 'On it.' },
            { toolUse: { toolUseId: 'c1', name: 'add', input: { a: 0 } } },
            { toolUse: { toolUseId: 'c2', name: 'add', input: { a: 2 } } },
          ],
        },
        // Consecutive tool results share one user turn.
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'c1', content: [{ text: '{"sum":0}' }] } },
            { toolResult: { toolUseId: 'c2', content: [{ text: '{"sum":2}' }] } },
          ],
        },
        { role: 'assistant', content: [{ text: 'It is 0 and 2.' }] },
        { role: 'user', content: [{ text: 'Again' }] },
      ],
      toolConfig: { tools: [{ toolSpec: { name: 'add', description: 'Adds.', inputSchema: { json: { type: 'object', properties: { a: { type: 'number' } } } } } }] },
    });
    expect(response).toMatchObject({
      text: 'Adding.',
      toolCalls: [{ id: 'tooluse_1_1', name: 'add', arguments: '{"a":1}' }],
      usage: { input_tokens: 40, output_tokens: 9 },
      response: { stopReason: 'tool_use', usage: { inputTokens: 40, outputTokens: 9 } },
    });
    expect(response.response).not.toHaveProperty('$metadata');
  });

  it('signs with the AWS credentials of the process, never a bearer key', async () => {
    const model = nextModel();

    const response = await provider().complete(request(model));

    expect(response.text).toBe('Hello');
    const { headers } = server.requests(model)[0]!;
    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDLOCALTEST\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
    expect(JSON.stringify(headers)).not.toContain('bedrock-api-key-from-the-environment');
  });

  it('asks for a JSON Schema answer when a response format is given', async () => {
    const model = nextModel();

    await provider().complete({ ...request(model), responseFormat: { type: 'json_schema', schema: { type: 'object' } } });

    expect(server.requests(model)[0]!.body.outputConfig).toEqual({
      textFormat: { type: 'json_schema', structure: { jsonSchema: { name: 'answer', schema: '{"type":"object"}' } } },
    });
  });

  it('retries throttling and a server error inside the call', async () => {
    const model = nextModel();
    server.enqueue(model, error(429, 'ThrottlingException'), error(500, 'InternalServerException'), answer('fine'));

    const response = await provider().complete(request(model));

    expect(response.text).toBe('fine');
    expect(server.requests(model)).toHaveLength(3);
  });

  it.each([
    [503, 'ServiceUnavailableException'],
    [429, 'ModelNotReadyException'],
  ])('gives up after three tries of HTTP %i %s, as retryable', async (status, type) => {
    const model = nextModel();
    server.enqueue(model, error(status, type), error(status, type), error(status, type));

    const caught = await failure(provider().complete(request(model)));

    expect(caught).toMatchObject({ provider: 'bedrock', status, retryable: true });
    expect(caught.message).toBe(`bedrock answered ${type} (HTTP ${status}): scripted ${type}`);
    expect(server.requests(model)).toHaveLength(3);
  });

  it.each([
    [400, 'ValidationException'],
    [403, 'AccessDeniedException'],
    [404, 'ResourceNotFoundException'],
  ])('fails for good on HTTP %i %s', async (status, type) => {
    const model = nextModel();
    server.enqueue(model, error(status, type));

    const caught = await failure(provider().complete(request(model)));

    expect(caught).toMatchObject({ provider: 'bedrock', status, retryable: false });
    expect(server.requests(model)).toHaveLength(1);
  });

  it('gives up on a model that does not answer in time, as retryable', async () => {
    const model = nextModel();
    server.enqueue(model, hang(), hang(), hang());

    const caught = await failure(provider(200).complete(request(model)));

    expect(caught).toMatchObject({ retryable: true, status: undefined, message: 'bedrock did not answer in time' });
    expect(server.requests(model)).toHaveLength(3);
  });

  it('reports an unreachable endpoint as retryable', async () => {
    const closed = await startFakeBedrock();
    await closed.close();
    vi.stubEnv('AWS_ENDPOINT_URL_BEDROCK_RUNTIME', closed.endpoint);
    // A try timeout of its own: a client of its own, which keeps the endpoint it first read.
    const caught = await failure(provider(1234).complete(request(nextModel()))).finally(() =>
      vi.stubEnv('AWS_ENDPOINT_URL_BEDROCK_RUNTIME', server.endpoint),
    );

    expect(caught).toMatchObject({ retryable: true, status: undefined });
    expect(caught.message).toMatch(/^bedrock could not be reached: /);
  });

  it('can be scripted over HTTP from another process', async () => {
    const model = nextModel();
    const remote = connectFakeBedrock(server.endpoint);
    await remote.enqueue(model, answer('scripted remotely'));

    const response = await provider().complete(request(model));

    expect(response.text).toBe('scripted remotely');
    expect((await remote.requests(model)).map((sent) => sent.body.messages)).toEqual([[{ role: 'user', content: [{ text: 'Hello' }] }]]);
  });
});
