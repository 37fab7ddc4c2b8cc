import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { attemptStore } from '#data/attempts';
import { finishInvocation, startNextAttempt } from '#core/attempts';
import { distillMemories } from '#core/distill-memories';
import { InvocationEndedError } from '#core/errors';
import { runAttemptSlice } from '#core/run-attempt';
import { sliceStore } from '#data/slice';
import { acceptanceStore } from '#data/acceptance';
import { acceptRun, recordRunRevision } from '#core/runs';
import { createRedactor } from '#functions/agent/secrets';
import type { ModelProvider } from '#functions/agent/types';
import { startAttempt } from '#functions/agent/loop';
import { queryPrefix } from '#data/dynamo';
import { keys } from '#data/keys';
import { listMemories, memoryGroupStore, writeMemories } from '#data/memories';
import { executionInput } from '#data/workflow';
import { spanStore } from '#data/spans';
import { answer, startFakeOpenAI, status, toolCall, type FakeOpenAIServer, type RecordedRequest } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// Memories end to end: agents write and read them through real runs against a fake model,
// and the /memories routes list and delete them.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const SECRET = 'sk-memory-canary-41f7b2';

const agentOf = (group: string, generation: ('agent' | 'session')[] = ['agent']): AgentConfig => ({
  model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, credential: '{{secret:MODEL_KEY}}' } },
  memory: { group, generation },
});

/** An organization whose MODEL_KEY secret the agents reference. */
async function organization() {
  const org = await newOrganization();
  const created = await request('POST', '/secrets', { token: org.token, body: { name: 'MODEL_KEY', value: SECRET } });
  expect(created.status).toBe(201);
  return org;
}

/** Runs a session to its answer; returns the response and the model requests it made. */
async function run(token: string, sessionId: string, key: string, agent: AgentConfig, prompt = 'Hello') {
  const before = model.requests.length;
  const res = await request('POST', `/sessions/${sessionId}`, {
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: prompt, agent_name: 'rememberer', agent },
  });
  return { res, sent: model.requests.slice(before) };
}

const systemOf = (sent: RecordedRequest) => {
  const first = sent.body.messages[0]!;
  return first.role === 'system' ? String(first.content) : '';
};

const toolResults = (sent: RecordedRequest) =>
  sent.body.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));

const memoriesPath = (group: string, extra = '') => `/memories?group=${encodeURIComponent(group)}${extra}`;

const list = async (token: string, group: string, extra = '') => request('GET', memoriesPath(group, extra), { token });

const auditOf = async (token: string, sessionId: string) =>
  (await request('GET', `/sessions/${sessionId}/audit`, { token })).body.events as { type: string; invocation_key: string; payload: Record<string, unknown> }[];

/** A running invocation to write memories with directly. */
async function runningInvocation(organizationId: string, sessionId = 'writer', invocationKey = 'w1') {
  const agent = agentOf('any');
  const { invocation } = await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId, invocationKey, rawBody: '{}', agentName: 'a', agent, userPrompt: 'x' });
  return invocation;
}

let seeded = 0;

/** Memories written straight to the group by a running invocation of their own, oldest first. */
async function seed(organizationId: string, group: string, contents: string[]) {
  seeded += 1;
  const invocation = await runningInvocation(organizationId, `seed-${seeded}`, `seed-${seeded}`);
  const result = await writeMemories({ organizationId, group, invocation, generation: 'agent', writes: contents.map((content) => ({ content })) });
  if (!('memories' in result)) throw new Error(`seeding failed: ${result.reason}`);
  return result.memories;
}

describe('memory generation agent', () => {
  it('stores what the model writes and gives it to the next run of the group in the system prompt', async () => {
    const { token } = await organization();
    model.enqueue(toolCall('memory_write', { content: `The user drinks tea; their key is ${SECRET}` }), answer('Noted.'));

    const first = await run(token, 'alpha', 'a1', agentOf('team'));

    expect(first.res.status).toBe(200);
    expect(first.sent[0]!.body.tools?.map((tool) => (tool as { function: { name: string } }).function.name)).toEqual(['memory_write']);
    const result = JSON.parse(toolResults(first.sent[1]!)[0]!);
    expect(result).toEqual({ id: expect.stringMatching(/^mem_[0-9a-z]{22}$/), status: 'active' });
    const listed = await list(token, 'team');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      memories: [{
        id: result.id,
        content: 'The user drinks tea; their key is [REDACTED:MODEL_KEY]',
        status: 'active',
        created_at: expect.any(String),
        source_session: 'alpha',
        source_invocation: 'a1',
      }],
    });
    const written = (await auditOf(token, 'alpha')).filter((event) => event.type === 'memory_written');
    expect(written).toEqual([expect.objectContaining({ invocation_key: 'a1', payload: { memory_id: result.id, group: 'team', generation: 'agent' } })]);

    model.enqueue(answer('You drink tea.'));
    const second = await run(token, 'beta', 'b1', agentOf('team'), 'What do I drink?');

    expect(second.res.status).toBe(200);
    const system = systemOf(second.sent[0]!);
    expect(system).toContain(`[${result.id}] The user drinks tea; their key is [REDACTED:MODEL_KEY]`);
    expect(system).toContain('memory_write');
    expect(JSON.stringify(second.sent.map((sent) => sent.body))).not.toContain(SECRET);
  });

  it('replaces a memory: the old one is listed replaced, only the new one reaches the model, stale ids are refused', async () => {
    const { token } = await organization();
    model.enqueue(toolCall('memory_write', { content: 'The office is in Paris.' }), answer('ok'));
    await run(token, 's1', 'k1', agentOf('office'));
    const [old] = (await list(token, 'office')).body.memories;

    model.enqueue(toolCall('memory_write', { content: 'The office moved to Lyon.', replaces: old.id }), answer('ok'));
    const replacing = await run(token, 's2', 'k2', agentOf('office'));
    const replaced = JSON.parse(toolResults(replacing.sent[1]!)[0]!);

    expect(replaced).toEqual({ id: expect.any(String), status: 'active', replaced: old.id });
    const listed = (await list(token, 'office')).body.memories;
    expect(listed.map((m: { id: string; content: string; status: string }) => [m.id, m.content, m.status])).toEqual([
      [replaced.id, 'The office moved to Lyon.', 'active'],
      [old.id, 'The office is in Paris.', 'replaced'],
    ]);
    expect(systemOf(replacing.sent[0]!)).toContain('The office is in Paris.');
    const audit = (await auditOf(token, 's2')).filter((event) => event.type === 'memory_written');
    expect(audit.map((event) => event.payload)).toEqual([{ memory_id: replaced.id, group: 'office', generation: 'agent', replaces: old.id }]);

    model.enqueue(
      toolCall('memory_write', { content: 'Back to Paris.', replaces: old.id }),
      toolCall('memory_write', { content: 'Somewhere.', replaces: 'mem_unknown' }),
      answer('done'),
    );
    const refused = await run(token, 's3', 'k3', agentOf('office'));

    const system = systemOf(refused.sent[0]!);
    expect(system).toContain(`[${replaced.id}] The office moved to Lyon.`);
    expect(system).not.toContain('Paris');
    expect(toolResults(refused.sent[1]!)[0]).toContain(`memory ${old.id} was already replaced`);
    expect(toolResults(refused.sent[2]!)[1]).toContain('the group has no memory mem_unknown');
    expect((await list(token, 'office')).body.memories).toHaveLength(2);
  });

  it('tells the model what is wrong with its arguments', async () => {
    const { token } = await organization();
    model.enqueue(toolCall('memory_write', { content: '   ' }), answer('ok'));

    const { sent } = await run(token, 'bad-args', 'k1', agentOf('args'));

    expect(toolResults(sent[1]!)[0]).toContain('content must not be empty');
    expect((await list(token, 'args')).body.memories).toEqual([]);
  });

  it('gives the memories but no tool without generation agent', async () => {
    const { token, organizationId } = await organization();
    await seed(organizationId, 'read-only', ['Fact one']);
    model.enqueue(answer('ok'));

    const { res, sent } = await run(token, 'reader', 'k1', agentOf('read-only', []));

    expect(res.status).toBe(200);
    expect(sent[0]!.body.tools).toBeUndefined();
    expect(systemOf(sent[0]!)).toContain('Fact one');
    expect(systemOf(sent[0]!)).not.toContain('memory_write');
  });

  it('keeps memories when their session is deleted', async () => {
    const { token } = await organization();
    model.enqueue(toolCall('memory_write', { content: 'Durable.' }), answer('ok'));
    await run(token, 'short-lived', 'k1', agentOf('lasting'));

    expect((await request('DELETE', '/sessions/short-lived', { token })).status).toBe(204);

    expect((await list(token, 'lasting')).body.memories.map((m: { content: string }) => m.content)).toEqual(['Durable.']);
  });

  it('writes nothing for an invocation that has ended (a harness outliving its run)', async () => {
    const { organizationId } = await organization();
    const invocation = await runningInvocation(organizationId);
    await finishInvocation(attemptStore(organizationId), invocation.invocation_key, { Error: 'SessionDeleted' });

    await expect(
      writeMemories({ organizationId, group: 'late', invocation, generation: 'agent', writes: [{ content: 'too late' }] }),
    ).rejects.toBeInstanceOf(InvocationEndedError);
    expect((await listMemories(organizationId, 'late', undefined, 10)).memories).toEqual([]);
  });
});

describe('memory generation session', () => {
  it('distils memories after a successful run, under a model_call span of the attempt', async () => {
    const { token, organizationId } = await organization();
    await seed(organizationId, 'distilled', ['The user is a gardener.']);
    model.enqueue(answer('Nice to meet you, Ada.'), answer('```json\n["The user is called Ada.", "The user grows roses."]\n```'));

    const { res, sent } = await run(token, 'ada', 'd1', agentOf('distilled', ['session']), 'I am Ada and I grow roses.');

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Nice to meet you, Ada.');
    expect(sent).toHaveLength(2);
    const distillation = sent[1]!;
    expect(systemOf(distillation)).toContain('JSON array');
    const asked = String(distillation.body.messages[1]!.content);
    expect(asked).toContain('- The user is a gardener.');
    expect(asked).toContain('USER: I am Ada and I grow roses.');
    expect(asked).toContain('ASSISTANT: Nice to meet you, Ada.');
    const memories = (await list(token, 'distilled')).body.memories;
    expect(memories.map((m: { content: string; source_session: string; source_invocation: string }) => [m.content, m.source_session, m.source_invocation])).toEqual([
      ['The user grows roses.', 'ada', 'd1'],
      ['The user is called Ada.', 'ada', 'd1'],
      ['The user is a gardener.', expect.any(String), expect.any(String)],
    ]);
    const spans = await queryPrefix(keys.spansOf(organizationId, 'd1'), { consistent: true });
    expect(spans.map((span) => [span.id, span.span_type, span.status])).toEqual([
      ['inv-1.att-1.1', 'model_call', 'SUCCEEDED'],
      ['inv-1.att-1.2', 'model_call', 'SUCCEEDED'],
    ]);
    const audit = await auditOf(token, 'ada');
    expect(audit.map((event) => event.type)).toEqual(['agent_invocation', 'llm_call', 'llm_call', 'memory_written', 'memory_written', 'run_succeeded']);
    expect(audit.filter((event) => event.type === 'memory_written').every((event) => event.payload.generation === 'session')).toBe(true);
    // The distillation's tokens count for the attempt.
    expect(audit.at(-1)!.payload.usage).toEqual({ input_tokens: 24, output_tokens: 6 });
  });

  it('keeps the answer when the distillation fails, and shows the failure on its span', async () => {
    const { token, organizationId } = await organization();
    model.enqueue(answer('Hello there.'), answer('I would rather not.'));

    const { res } = await run(token, 'shy', 'd1', agentOf('failing', ['session']));

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Hello there.');
    expect((await list(token, 'failing')).body.memories).toEqual([]);
    const spans = await queryPrefix(keys.spansOf(organizationId, 'd1'), { consistent: true });
    expect(spans.map((span) => [span.id, span.status])).toEqual([['inv-1.att-1.1', 'SUCCEEDED'], ['inv-1.att-1.2', 'FAILED']]);

    model.enqueue(answer('Hello again.'), status(400, { error: { message: 'no more', type: 'invalid_request_error' } }));
    const refused = await run(token, 'shy', 'd2', agentOf('failing', ['session']));

    expect(refused.res.status).toBe(200);
    expect(refused.res.body.message.content).toBe('Hello again.');
    const refusedSpans = await queryPrefix(keys.spansOf(organizationId, 'd2'), { consistent: true });
    expect(refusedSpans.map((span) => [span.id, span.status])).toEqual([['inv-2.att-1.1', 'SUCCEEDED'], ['inv-2.att-1.2', 'FAILED']]);
    expect((await list(token, 'failing')).body.memories).toEqual([]);
  });

  it('distils an invocation at most once, whatever runs again', async () => {
    const { organizationId } = await organization();
    const agent = agentOf('once', ['session']);
    const { invocation } = await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId: 'once', invocationKey: 'o1', rawBody: '{}', agentName: 'a', agent, userPrompt: 'Remember me' });
    await recordRunRevision(acceptanceStore(organizationId), { agentName: 'a', agent }, invocation);
    model.enqueue(answer('Sure.'), answer('["Someone wants to be remembered."]'));
    expect(await runAttemptSlice(sliceStore(organizationId), { ...executionInput(organizationId, invocation), after: 0 }, 60_000)).toEqual({ attempt: 1, state: 'done' });

    let calls = 0;
    const provider: ModelProvider = {
      body: () => ({}),
      complete: async () => {
        calls += 1;
        return { text: '["Again."]', toolCalls: [], usage: { input_tokens: 1, output_tokens: 1 }, response: {} };
      },
    };
    const state = startAttempt({ sessionPosition: 1, attempt: 1, history: [], userPrompt: 'Remember me' });
    const again = await distillMemories(state, {
      memories: memoryGroupStore(organizationId, 'once', invocation), provider, model: 'gpt-fake',
      spans: spanStore(organizationId, invocation, 1), redactor: createRedactor(new Map()), signal: new AbortController().signal,
    });

    expect(calls).toBe(0);
    expect(again).toBe(state);
    expect((await listMemories(organizationId, 'once', undefined, 10)).memories.map((m) => m.content)).toEqual(['Someone wants to be remembered.']);
    // The slice recorded the outcome: nothing more is written for the invocation.
    await expect(writeMemories({ organizationId, group: 'once', invocation, generation: 'session', writes: [{ content: 'x' }], distillation: true })).rejects.toBeInstanceOf(InvocationEndedError);
  });
});

describe('GET /memories', () => {
  it('pages newest first with next_cursor', async () => {
    const { token, organizationId } = await organization();
    const written = await seed(organizationId, 'paged', ['m1', 'm2', 'm3', 'm4', 'm5']);

    const first = await list(token, 'paged', '&limit=2');
    const second = await list(token, 'paged', `&limit=2&after=${encodeURIComponent(first.body.next_cursor)}`);
    const last = await list(token, 'paged', `&limit=2&after=${encodeURIComponent(second.body.next_cursor)}`);
    const all = await list(token, 'paged');

    const contents = (res: { body: { memories: { content: string }[] } }) => res.body.memories.map((m) => m.content);
    expect([contents(first), contents(second), contents(last)]).toEqual([['m5', 'm4'], ['m3', 'm2'], ['m1']]);
    expect(last.body.next_cursor).toBeUndefined();
    expect(all.body.memories.map((m: { id: string }) => m.id)).toEqual(written.map((m) => m.id).reverse());
    expect(all.body.next_cursor).toBeUndefined();
  });

  it('answers 400 for a bad limit and a tampered, foreign, other-group or other-list cursor', async () => {
    const first = await organization();
    const second = await organization();
    await seed(first.organizationId, 'g', ['a', 'b']);
    await seed(first.organizationId, 'h', ['c', 'd']);
    await seed(second.organizationId, 'g', ['e', 'f']);
    const cursor: string = (await list(first.token, 'g', '&limit=1')).body.next_cursor;
    const sessionsCursor = await (async () => {
      for (const id of ['x1', 'x2']) {
        model.enqueue(answer('ok'));
        await run(first.token, id, id, { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } });
      }
      return (await request('GET', '/sessions?limit=1', { token: first.token })).body.next_cursor as string;
    })();

    const statusOf = async (token: string, group: string, extra: string) => (await list(token, group, extra)).status;
    expect(await statusOf(first.token, 'g', `&after=${encodeURIComponent(cursor)}`)).toBe(200);
    expect(await statusOf(first.token, 'g', `&after=${cursor.slice(0, -2)}xx`)).toBe(400);
    expect(await statusOf(second.token, 'g', `&after=${encodeURIComponent(cursor)}`)).toBe(400);
    expect(await statusOf(first.token, 'h', `&after=${encodeURIComponent(cursor)}`)).toBe(400);
    expect(await statusOf(first.token, 'g', `&after=${encodeURIComponent(sessionsCursor)}`)).toBe(400);
    expect(await statusOf(first.token, 'g', '&limit=0')).toBe(400);
    expect(await statusOf(first.token, 'g', '&limit=1001')).toBe(400);
    expect(await statusOf(first.token, 'g', '&limit=1000')).toBe(200);
    expect(await statusOf(first.token, 'g', '&limit=two')).toBe(400);
  });

  it('gives an empty list for an unknown group', async () => {
    const { token } = await organization();

    const res = await list(token, 'nobody-here');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ memories: [] });
  });
});

describe('DELETE /memories/{id}', () => {
  it('deletes one memory for good: 204, then 404', async () => {
    const { token, organizationId } = await organization();
    const [kept, doomed] = await seed(organizationId, 'trim', ['kept', 'doomed']);

    const res = await request('DELETE', `/memories/${doomed!.id}?group=trim`, { token });

    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect((await request('DELETE', `/memories/${doomed!.id}?group=trim`, { token })).status).toBe(404);
    expect((await list(token, 'trim')).body.memories.map((m: { id: string }) => m.id)).toEqual([kept!.id]);
  });

  it('answers 404 for an unknown id and for a memory of another group', async () => {
    const { token, organizationId } = await organization();
    const [memory] = await seed(organizationId, 'mine', ['mine']);

    expect((await request('DELETE', '/memories/mem_nothing?group=mine', { token })).status).toBe(404);
    const other = await request('DELETE', `/memories/${memory!.id}?group=theirs`, { token });
    expect(other.status).toBe(404);
    expect(other.body.message).toEqual(expect.any(String));
    expect((await list(token, 'mine')).body.memories).toHaveLength(1);
  });
});

describe('DELETE /memories', () => {
  it('deletes every memory of the group, repeatably, and the agents remember again afterwards', async () => {
    const { token, organizationId } = await organization();
    await seed(organizationId, 'wipe', ['one', 'two', 'three']);
    await seed(organizationId, 'wipe-not', ['other group']);

    expect((await request('DELETE', '/memories?group=wipe', { token })).status).toBe(204);
    const again = await request('DELETE', '/memories?group=wipe', { token });

    expect(again.status).toBe(204);
    expect(again.body).toBeNull();
    expect((await list(token, 'wipe')).body.memories).toEqual([]);
    expect((await list(token, 'wipe-not')).body.memories).toHaveLength(1);

    model.enqueue(toolCall('memory_write', { content: 'A fresh start.' }), answer('ok'));
    const { res, sent } = await run(token, 'after-wipe', 'k1', agentOf('wipe'));
    expect(res.status).toBe(200);
    expect(systemOf(sent[0]!)).toContain('The group has no memories yet.');
    expect((await list(token, 'wipe')).body.memories.map((m: { content: string }) => m.content)).toEqual(['A fresh start.']);
  });
});

describe('memory groups', () => {
  it('are per organization: another organization with the same group name sees nothing and deletes nothing', async () => {
    const owner = await organization();
    const stranger = await organization();
    const [memory] = await seed(owner.organizationId, 'shared-name', ['private fact']);

    expect((await list(stranger.token, 'shared-name')).body.memories).toEqual([]);
    expect((await request('DELETE', `/memories/${memory!.id}?group=shared-name`, { token: stranger.token })).status).toBe(404);
    expect((await request('DELETE', '/memories?group=shared-name', { token: stranger.token })).status).toBe(204);
    model.enqueue(answer('ok'));
    const { sent } = await run(stranger.token, 'curious', 'k1', agentOf('shared-name', []));

    expect(JSON.stringify(sent)).not.toContain('private fact');
    expect((await list(owner.token, 'shared-name')).body.memories).toHaveLength(1);
  });

  it('may hold any characters, each name its own group', async () => {
    const { token, organizationId } = await organization();
    await seed(organizationId, 'a', ['in a']);
    await seed(organizationId, 'a#b/c?d&e=é ', ['in the odd one']);

    expect((await list(token, 'a#b/c?d&e=é ')).body.memories.map((m: { content: string }) => m.content)).toEqual(['in the odd one']);
    expect((await list(token, 'a#b')).body.memories).toEqual([]);
    expect((await list(token, 'a')).body.memories.map((m: { content: string }) => m.content)).toEqual(['in a']);
  });

  it('answer 400 for a missing, empty or oversized group and an oversized id, 401 without credential', async () => {
    const { token } = await organization();
    const long = 'g'.repeat(257);

    for (const [method, path] of [
      ['GET', '/memories'],
      ['GET', '/memories?group='],
      ['GET', `/memories?group=${long}`],
      ['DELETE', '/memories'],
      ['DELETE', '/memories?group='],
      ['DELETE', `/memories?group=${long}`],
      ['DELETE', '/memories/mem_1'],
      ['DELETE', '/memories/mem_1?group='],
      ['DELETE', `/memories/mem_1?group=${long}`],
      ['DELETE', `/memories/${'i'.repeat(65)}?group=g`],
    ] as const) {
      const res = await request(method, path, { token });
      expect([method, path, res.status]).toEqual([method, path, 400]);
      expect(res.body.message).toEqual(expect.any(String));
    }
    expect((await list(token, 'g'.repeat(256))).status).toBe(200);
    expect((await request('GET', '/memories?group=g')).status).toBe(401);
    expect((await request('DELETE', '/memories?group=g')).status).toBe(401);
    expect((await request('DELETE', '/memories/mem_1?group=g')).status).toBe(401);
  });

  it('can be listed and deleted with an API key', async () => {
    const { token, organizationId } = await organization();
    const [memory] = await seed(organizationId, 'keyed', ['one', 'two']);
    const minted = await request('POST', '/tokens', { token, body: { name: 'memories' } });
    expect(minted.status).toBe(201);
    const key: string = minted.body.key;

    expect((await list(key, 'keyed')).body.memories).toHaveLength(2);
    expect((await request('DELETE', `/memories/${memory!.id}?group=keyed`, { token: key })).status).toBe(204);
    expect((await request('DELETE', '/memories?group=keyed', { token: key })).status).toBe(204);
    expect((await list(key, 'keyed')).body.memories).toEqual([]);
  });
});
