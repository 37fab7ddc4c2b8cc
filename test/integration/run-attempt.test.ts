import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { runAttemptSlice, type SliceInput } from '#core/run-attempt';
import { sliceStore } from '#data/slice';
import { acceptanceStore } from '#data/acceptance';
import { acceptRun, recordRunRevision } from '#core/runs';
import type { Invocation } from '#core/model';
import { executionInput } from '#data/workflow';
import { listAttempts } from '#data/attempts';
import { queryPrefix } from '#data/dynamo';
import { keys } from '#data/keys';
import { getJson, payloadKey } from '#data/payloads';
import { answer, startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// One attempt slice end to end against DynamoDB Local, the S3 emulator, the Secrets
// Manager endpoint and a fake OpenAI-compatible server over real HTTP.
const CANARY = 'sk-canary-credential-7c1e9a';

/** The first slice of an invocation, as the state machine orders it: it opens attempt 1. */
const sliceOf = (organizationId: string, invocation: Invocation): SliceInput => ({ ...executionInput(organizationId, invocation), after: 0 });

describe('an attempt slice', () => {
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await startFakeOpenAI();
  });

  afterAll(() => model.close());

  async function acceptedRun(agent: AgentConfig, prompt = 'What is 2+2?') {
    const { organizationId, token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'MODEL_KEY', value: CANARY } });
    const first = await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId: 's', invocationKey: 'k1', rawBody: '{}', agentName: 'a', agent, userPrompt: 'Earlier question' });
    // A first exchange in the session, so the second invocation has history.
    await recordRunRevision(acceptanceStore(organizationId), { agentName: 'a', agent }, first.invocation);
    model.enqueue(answer('Earlier answer'));
    expect(await runAttemptSlice(sliceStore(organizationId), sliceOf(organizationId, first.invocation), 60_000)).toEqual({ attempt: 1, state: 'done' });
    const { invocation } = await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId: 's', invocationKey: 'k2', rawBody: '{}', agentName: 'a', agent, userPrompt: prompt });
    return { organizationId, invocation, first };
  }

  it('answers with the session history, records spans and payloads, and never the credential', async () => {
    const agent: AgentConfig = {
      model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, credential: '{{secret:MODEL_KEY}}' } },
      system_prompt: 'Answer briefly.',
    };
    const { organizationId, invocation } = await acceptedRun(agent);
    model.enqueue(answer(`4 (and the key is ${CANARY})`));

    const outcome = await runAttemptSlice(sliceStore(organizationId), sliceOf(organizationId, invocation), 60_000);

    expect(outcome).toEqual({ attempt: 1, state: 'done' });
    const sent = model.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${CANARY}`);
    expect(sent.body.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'Answer briefly.'],
      ['user', 'Earlier question'],
      ['assistant', 'Earlier answer'],
      ['user', 'What is 2+2?'],
    ]);
    const messages = await queryPrefix(keys.messagesOf(organizationId, 's'), { consistent: true });
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: '4 (and the key is [REDACTED:MODEL_KEY])' });

    const spans = await queryPrefix(keys.spansOf(organizationId, 'k2'), { consistent: true });
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ id: 'inv-2.att-1.1', span_type: 'model_call', name: 'gpt-fake', status: 'SUCCEEDED', usage: { input_tokens: 12, output_tokens: 3 } });
    expect(spans[0]!.expires_at).toBe(Math.floor(Date.parse(invocation.started_at) / 1000) + 90 * 24 * 3600);
    const input = await getJson(payloadKey(organizationId, 'k2', 'inv-2.att-1.1', 'input'));
    const output = await getJson(payloadKey(organizationId, 'k2', 'inv-2.att-1.1', 'output'));
    expect(Buffer.byteLength(input!)).toBe(spans[0]!.input_bytes);
    expect(JSON.parse(input!).model).toBe('gpt-fake');
    expect(`${input}${output}${JSON.stringify(spans)}${JSON.stringify(messages)}`).not.toContain(CANARY);

    const audit = await queryPrefix(keys.auditOf(organizationId, 's'), { consistent: true });
    expect(audit.map((e) => e.event_type)).toEqual(['agent_invocation', 'llm_call', 'run_succeeded', 'agent_invocation', 'llm_call', 'run_succeeded']);
    expect(JSON.stringify(audit)).not.toContain(CANARY);
  });

  it('fails the attempt with MaxStepsError when the model never answers within max_steps', async () => {
    const agent: AgentConfig = { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, max_steps: 1 };
    const { organizationId, invocation } = await acceptedRun(agent);
    model.enqueue({ kind: 'tool_calls', calls: [{ name: 'nothing', arguments: '{}' }], usage: { prompt_tokens: 1, completion_tokens: 1 } });

    const error = await runAttemptSlice(sliceStore(organizationId), sliceOf(organizationId, invocation), 60_000).catch((e: Error) => e);

    expect((error as Error).name).toBe('MaxStepsError');
    expect((await listAttempts(organizationId, 'k2'))[0]).toMatchObject({ status: 'RUNNING', steps: 1 });
    const spans = await queryPrefix(keys.spansOf(organizationId, 'k2'), { consistent: true });
    expect(spans.map((span) => [span.span_type, span.status])).toEqual([['model_call', 'SUCCEEDED'], ['tool_call', 'FAILED']]);
  });
});
