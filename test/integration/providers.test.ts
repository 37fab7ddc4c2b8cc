import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listAttempts } from '#data/attempts';
import { queryPrefix } from '#data/dynamo';
import { keys } from '#data/keys';
import { getJson, payloadKey } from '#data/payloads';
import { answer, startFakeAnthropic, status, type FakeAnthropicServer } from '../fakes/anthropic-server';
import { answer as bedrockAnswer, connectFakeBedrock, error as bedrockError } from '../fakes/bedrock-server';
import { newOrganization, request } from './support';

// Full runs over HTTP through POST /sessions/{id} on the anthropic and bedrock providers:
// the local gateway, the state machine, the RunSteps task in its own process, the real
// SDKs, and fakes of both APIs on 127.0.0.1. The Bedrock fake is the one global-setup
// started (its endpoint is the cloud's); these model ids are in the cloud's catalogue.
const BEDROCK_MODEL = 'test.providers-answer-v1:0';
const BEDROCK_RETRY_MODEL = 'test.providers-retry-v1:0';
const CANARY = `sk-ant-canary-${Date.now().toString(36)}-never-shown`;
// The fake's own pause before a retried try, so the SDK's backoff stays short.
const SOON = { 'retry-after-ms': '10' };

const bedrock = connectFakeBedrock(inject('serviceEnv').AWS_ENDPOINT_URL_BEDROCK_RUNTIME!);
let anthropic: FakeAnthropicServer;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
});

afterAll(() => anthropic.close());

const anthropicAgent = () => ({
  model: { name: 'claude-fake', provider: { name: 'anthropic', url: anthropic.url, credential: '{{secret:ANTHROPIC_KEY}}' } },
  system_prompt: 'Answer briefly.',
});

async function run(token: string, sessionId: string, key: string, agent: unknown, prompt: string) {
  return request('POST', `/sessions/${sessionId}`, { token, headers: { 'idempotency-key': key }, body: { user_prompt: prompt, agent_name: 'provider-test', agent } });
}

async function spansOf(organizationId: string, invocationKey: string) {
  return queryPrefix(keys.spansOf(organizationId, invocationKey), { consistent: true });
}

describe('the anthropic provider end to end', () => {
  let org: Awaited<ReturnType<typeof newOrganization>>;
  const responses: unknown[] = [];

  beforeAll(async () => {
    org = await newOrganization();
    expect((await request('POST', '/secrets', { token: org.token, body: { name: 'ANTHROPIC_KEY', value: CANARY } })).status).toBe(201);
  });

  it('answers, carries the session history into the next turn, and records model_call spans with usage', async () => {
    anthropic.enqueue(answer('Paris.', { input_tokens: 31, output_tokens: 2 }));
    const first = await run(org.token, 'anthropic-chat', 'a1', anthropicAgent(), 'Capital of France?');
    anthropic.enqueue(answer(`Lyon. (my key is ${CANARY})`, { input_tokens: 44, output_tokens: 9 }));
    const second = await run(org.token, 'anthropic-chat', 'a2', anthropicAgent(), 'And its second city?');
    responses.push(first.body, second.body);

    expect(first.status).toBe(200);
    expect(first.body.message).toMatchObject({ role: 'assistant', content: 'Paris.' });
    expect(second.status).toBe(200);
    // An answer that quotes the key is stored and shown redacted.
    expect(second.body.message.content).toBe('Lyon. (my key is [REDACTED:ANTHROPIC_KEY])');

    const sent = anthropic.requests.at(-1)!;
    expect(sent.headers['x-api-key']).toBe(CANARY);
    expect(sent.body).toMatchObject({
      model: 'claude-fake',
      system: 'Answer briefly.',
      max_tokens: 4096,
      messages: [
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris.' },
        { role: 'user', content: 'And its second city?' },
      ],
    });

    const spans = await spansOf(org.organizationId, 'a2');
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ id: 'inv-2.att-1.1', span_type: 'model_call', name: 'claude-fake', status: 'SUCCEEDED', usage: { input_tokens: 44, output_tokens: 9 } });
    const input = JSON.parse((await getJson(payloadKey(org.organizationId, 'a2', 'inv-2.att-1.1', 'input')))!);
    expect(input.messages).toHaveLength(3);
    const output = await getJson(payloadKey(org.organizationId, 'a2', 'inv-2.att-1.1', 'output'));
    expect(JSON.parse(output!)).toMatchObject({ type: 'message', usage: { input_tokens: 44, output_tokens: 9 } });
    expect(`${JSON.stringify(spans)}${JSON.stringify(input)}${output}`).not.toContain(CANARY);
    expect((await listAttempts(org.organizationId, 'a2'))[0]).toMatchObject({ status: 'SUCCEEDED', usage: { input_tokens: 44, output_tokens: 9 } });
  });

  it('answers after a try that failed on every retry, in a second attempt', async () => {
    // Three tries of the first attempt, all refused as overloaded; the second attempt answers.
    anthropic.enqueue(status(529, undefined, SOON), status(529, undefined, SOON), status(529, undefined, SOON), answer('Second time lucky.'));

    const res = await run(org.token, 'anthropic-retry', 'r1', anthropicAgent(), 'Try hard');
    responses.push(res.body);

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Second time lucky.');
    expect((await listAttempts(org.organizationId, 'r1')).map((a) => [a.number, a.status, a.failure?.kind])).toEqual([
      [1, 'FAILED', 'interrupted'],
      [2, 'SUCCEEDED', undefined],
    ]);
    expect((await spansOf(org.organizationId, 'r1')).map((span) => [span.id, span.status, span.usage])).toEqual([
      ['inv-1.att-1.1', 'FAILED', null],
      ['inv-1.att-2.1', 'SUCCEEDED', { input_tokens: 21, output_tokens: 5 }],
    ]);
  });

  it('fails for good on a refused credential, without the key in the answer', async () => {
    anthropic.enqueue(status(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${CANARY}` } }));

    const res = await run(org.token, 'anthropic-refused', 'f1', anthropicAgent(), 'Hello?');
    responses.push(res.body);

    expect(res.status).toBe(502);
    expect(res.body.kind).toBe('interrupted');
    expect(res.body.message).toContain('anthropic answered HTTP 401');
    expect(await listAttempts(org.organizationId, 'f1')).toHaveLength(1);
  });

  it('never shows the credential in an API response, the audit log or the service log', async () => {
    const audits = await Promise.all(
      ['anthropic-chat', 'anthropic-retry', 'anthropic-refused'].map((id) => request('GET', `/sessions/${id}/audit`, { token: org.token })),
    );
    const sessions = await Promise.all(
      ['anthropic-chat', 'anthropic-retry', 'anthropic-refused'].map((id) => request('GET', `/sessions/${id}`, { token: org.token })),
    );
    const secret = await request('GET', '/secrets/ANTHROPIC_KEY', { token: org.token });
    const log = await readFile(inject('serviceLogFile'), 'utf8');

    expect(audits[0]!.body.events.map((event: { type: string }) => event.type)).toEqual([
      'agent_invocation',
      'llm_call',
      'run_succeeded',
      'agent_invocation',
      'llm_call',
      'run_succeeded',
    ]);
    expect(audits[0]!.body.events[4].payload).toMatchObject({ model: 'claude-fake', usage: { input_tokens: 44, output_tokens: 9 } });
    expect(anthropic.requests.every((sent) => sent.headers['x-api-key'] === CANARY)).toBe(true);
    for (const shown of [...responses, ...audits.map((a) => a.body), ...sessions.map((s) => s.body), secret.body]) {
      expect(JSON.stringify(shown)).not.toContain(CANARY);
    }
    expect(log).not.toContain(CANARY);
  });
});

describe('the bedrock provider end to end', () => {
  const bedrockAgent = (model = BEDROCK_MODEL) => ({ model: { name: model, provider: { name: 'bedrock' } }, system_prompt: 'Be exact.' });

  it('answers through Converse, signed with the service role, and records the usage', async () => {
    const { token, organizationId } = await newOrganization();
    await bedrock.enqueue(BEDROCK_MODEL, bedrockAnswer('Four.', { inputTokens: 50, outputTokens: 3 }));

    const res = await run(token, 'bedrock-chat', 'b1', bedrockAgent(), 'What is 2+2?');

    expect(res.status).toBe(200);
    expect(res.body.message).toMatchObject({ role: 'assistant', content: 'Four.' });
    const sent = (await bedrock.requests(BEDROCK_MODEL)).at(-1)!;
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=.*\/bedrock\/aws4_request/);
    expect(sent.body).toMatchObject({ system: [{ text: 'Be exact.' }], messages: [{ role: 'user', content: [{ text: 'What is 2+2?' }] }] });
    const spans = await spansOf(organizationId, 'b1');
    expect(spans.map((span) => [span.span_type, span.name, span.status, span.usage])).toEqual([
      ['model_call', BEDROCK_MODEL, 'SUCCEEDED', { input_tokens: 50, output_tokens: 3 }],
    ]);
    const audit = await request('GET', '/sessions/bedrock-chat/audit', { token });
    expect(audit.body.events.find((event: { type: string }) => event.type === 'llm_call').payload).toMatchObject({
      model: BEDROCK_MODEL,
      usage: { input_tokens: 50, output_tokens: 3 },
    });
  });

  it('retries throttling inside the call and answers', async () => {
    const { token, organizationId } = await newOrganization();
    await bedrock.enqueue(BEDROCK_RETRY_MODEL, bedrockError(429, 'ThrottlingException'), bedrockAnswer('Eventually.'));
    const before = (await bedrock.requests(BEDROCK_RETRY_MODEL)).length;

    const res = await run(token, 'bedrock-retry', 'b2', bedrockAgent(BEDROCK_RETRY_MODEL), 'Please');

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Eventually.');
    expect((await bedrock.requests(BEDROCK_RETRY_MODEL)).length - before).toBe(2);
    expect((await listAttempts(organizationId, 'b2')).map((a) => a.status)).toEqual(['SUCCEEDED']);
  });

  it.each([
    ['a credential', { name: BEDROCK_MODEL, provider: { name: 'bedrock', credential: '{{secret:AWS_KEY}}' } }, /credential/],
    ['a url', { name: BEDROCK_MODEL, provider: { name: 'bedrock', url: 'http://127.0.0.1:9' } }, /url/],
    ['a model outside the catalogue', { name: 'anthropic.claude-opus-not-granted-v1:0', provider: { name: 'bedrock' } }, /catalogue/],
  ])('refuses %s with 400 before anything runs', async (_case, model, reason) => {
    const { token } = await newOrganization();

    const res = await run(token, 'bedrock-refused', 'x1', { model }, 'Hello');

    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(reason);
    expect((await request('GET', '/sessions/bedrock-refused', { token })).status).toBe(404);
  });

  it('lists a model of every provider in the catalogue', async () => {
    const { token } = await newOrganization();

    const res = await request('GET', '/models', { token });

    expect(new Set(res.body.models.map((model: { provider: string }) => model.provider))).toEqual(new Set(['openai', 'anthropic', 'bedrock']));
    expect(res.body.models).toContainEqual({ provider: 'bedrock', name: BEDROCK_MODEL });
  });
});
