/**
 * GET /traces/{invocation_key}/events end to end: a follower looping on `next_cursor`
 * while the run goes on sees exactly the events one read after the end returns, page size
 * and attempts whatever; a long poll answers soon after an event; every 4xx of the
 * contract answers, and another organization sees nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, delay, startFakeOpenAI, status, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const SOON = { 'retry-after-ms': '10' };

const start = (token: string, sessionId: string, key: string, prompt: string) =>
  request('POST', `/sessions/${sessionId}?wait_timeout_seconds=0`, {
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: prompt, agent_name: 'followed', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } } },
  });

const events = (token: string, key: string, query: Record<string, string | number | undefined> = {}) =>
  request('GET', `/traces/${encodeURIComponent(key)}/events?${new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])))}`, { token });

/** Follows with `limit` until `next_cursor` is absent; the events in order. */
async function follow(token: string, key: string, limit: number): Promise<{ seq: number; type: string }[]> {
  const seen: { seq: number; type: string }[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 500; pages++) {
    const page = await events(token, key, { limit, wait_seconds: 2, ...(after ? { after } : {}) });
    expect(page.status).toBe(200);
    seen.push(...page.body.events);
    if (!page.body.next_cursor) return seen;
    after = page.body.next_cursor;
  }
  throw new Error('the follower never reached invocation_ended');
}

function expectWellFormed(list: { seq: number; type: string }[]): void {
  for (let i = 1; i < list.length; i++) expect(list[i]!.seq).toBeGreaterThan(list[i - 1]!.seq);
  expect(list.at(-1)!.type).toBe('invocation_ended');
  expect(list.filter((event) => event.type === 'invocation_ended')).toHaveLength(1);
}

describe('GET /traces/{invocation_key}/events', () => {
  it('gives a follower paging one event at a time the same sequence as one read after the end', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(300, toolCall('lookup', { q: 1 })), delay(300, toolCall('lookup', { q: 2 })), delay(300, answer('found it')));
    expect((await start(token, 'f1', 'follow-1', 'find it')).status).toBe(202);

    const followed = await follow(token, 'follow-1', 1);
    const after = await events(token, 'follow-1', { limit: 500 });

    expect(after.body.next_cursor).toBeUndefined();
    expect(after.body.status).toBe('SUCCEEDED');
    expect(followed).toEqual(after.body.events);
    expectWellFormed(followed);
    expect(followed.map((event) => event.type)).toEqual([
      'attempt_started',
      'span_started', 'span_ended', 'span_started', 'span_ended',
      'span_started', 'span_ended', 'span_started', 'span_ended',
      'span_started', 'span_ended',
      'attempt_ended',
      'invocation_ended',
    ]);
    const [first, started, ended] = after.body.events;
    expect(first.attempt).toMatchObject({ number: 1, status: 'RUNNING', usage: { input_tokens: 0, output_tokens: 0 } });
    expect(started.span).toMatchObject({ id: 'inv-1.att-1.1', type: 'model_call', status: 'RUNNING', ended_at: null, usage: null });
    expect(ended.span).toMatchObject({ id: 'inv-1.att-1.1', status: 'SUCCEEDED', ended_at: expect.any(String), usage: { input_tokens: 12, output_tokens: 3 } });
    expect(after.body.events.at(-2).attempt).toMatchObject({ number: 1, status: 'SUCCEEDED', ended_at: expect.any(String) });
    expect(after.body.events.at(-1)).toMatchObject({ type: 'invocation_ended', status: 'SUCCEEDED', message: { role: 'assistant', content: 'found it' } });
  });

  it('lists the events of every attempt, the failed one included', async () => {
    const { token } = await newOrganization();
    model.enqueue(status(500, undefined, SOON), status(500, undefined, SOON), status(500, undefined, SOON), answer('second time'));
    expect((await start(token, 'f2', 'follow-2', 'try twice')).status).toBe(202);

    const followed = await follow(token, 'follow-2', 2);
    const after = await events(token, 'follow-2', { limit: 500 });

    expect(followed).toEqual(after.body.events);
    expectWellFormed(followed);
    expect(followed.map((event) => [event.type, (event as { attempt?: { number: number } }).attempt?.number])).toEqual([
      ['attempt_started', 1], ['span_started', undefined], ['span_ended', undefined], ['attempt_ended', 1],
      ['attempt_started', 2], ['span_started', undefined], ['span_ended', undefined], ['attempt_ended', 2],
      ['invocation_ended', undefined],
    ]);
    expect(after.body.events[2].span.status).toBe('FAILED');
    expect(after.body.events[3].attempt).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted' } });
  });

  it('holds a long poll until the next event and answers soon after it', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(1500, answer('later')));
    await start(token, 'f3', 'follow-3', 'wait for it');
    // Everything up to the model call's start.
    let page = await events(token, 'follow-3', { wait_seconds: 5 });
    let after = page.body.next_cursor as string;
    while (!page.body.events.some((event: { type: string }) => event.type === 'span_started')) {
      page = await events(token, 'follow-3', { wait_seconds: 5, after });
      after = page.body.next_cursor;
    }

    const asked = Date.now();
    const held = await events(token, 'follow-3', { wait_seconds: 10, after });

    expect(held.body.events[0].type).toBe('span_ended');
    expect(Date.now() - asked).toBeGreaterThan(800);
    expect(Date.now() - asked).toBeLessThan(3000);
  });

  it('answers an empty page with the same position when nothing happens within the wait', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(3000, answer('slow')));
    await start(token, 'f4', 'follow-4', 'slowly');
    await sleep(500);
    const first = await events(token, 'follow-4', { limit: 500 });
    const asked = Date.now();

    const empty = await events(token, 'follow-4', { wait_seconds: 1, after: first.body.next_cursor });

    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ status: 'RUNNING', events: [], next_cursor: expect.any(String) });
    expect(Date.now() - asked).toBeGreaterThanOrEqual(900);
  });

  it('refuses bad parameters and cursors with 400, and shows another organization nothing', async () => {
    const { token } = await newOrganization();
    const other = await newOrganization();
    model.enqueue(answer('one'), answer('two'));
    await start(token, 'f5', 'follow-5', 'one');
    await follow(token, 'follow-5', 100);
    await start(token, 'f6', 'follow-6', 'two');
    const page = await events(token, 'follow-5', { limit: 1 });
    const cursor = page.body.next_cursor as string;

    for (const query of [{ limit: 0 }, { limit: 501 }, { wait_seconds: 21 }, { wait_seconds: -1 }, { limit: 'x' }, { after: `${cursor}x` }, { after: 'nonsense' }]) {
      const refused = await events(token, 'follow-5', query);
      expect(refused.status, JSON.stringify(query)).toBe(400);
      expect(refused.body.message).toEqual(expect.any(String));
    }
    expect((await events(token, 'follow-6', { after: cursor })).status).toBe(400);
    expect((await events(other.token, 'follow-5')).status).toBe(404);
    expect((await events(token, 'no-such-key')).status).toBe(404);
    expect((await request('GET', '/traces/follow-5/events')).status).toBe(401);
    // Another organization's cursor for a key it names the same.
    model.enqueue(answer('theirs'));
    await start(other.token, 'f5', 'follow-5', 'theirs');
    const theirs = await events(other.token, 'follow-5', { limit: 1 });
    expect((await events(token, 'follow-5', { after: theirs.body.next_cursor })).status).toBe(400);
    // Both runs take their scripted answers before the next test scripts its own.
    await follow(other.token, 'follow-5', 100);
    await follow(token, 'follow-6', 100);
  });

  it('summaries carry usage over all attempts and, for a priced model, its cost', async () => {
    const { token } = await newOrganization();
    model.enqueue(status(500, undefined, SOON), status(500, undefined, SOON), status(500, undefined, SOON), toolCall('lookup', {}), answer('priced'));
    // gpt-4.1-mini is priced by the default catalogue at 0.4 / 1.6 USD per million tokens.
    const answered = await request('POST', '/sessions/priced?wait_timeout_seconds=20', {
      token,
      headers: { 'idempotency-key': 'priced-1' },
      body: { user_prompt: 'how much?', agent_name: 'pricey', agent: { model: { name: 'gpt-4.1-mini', provider: { name: 'openai', url: model.url } } } },
    });
    expect(answered.status).toBe(200);

    const trace = await request('GET', '/traces/priced-1?payloads=false', { token });
    const listed = await request('GET', '/traces?session_id=priced', { token });

    // Two model calls of 12 + 3 tokens in the second attempt (the first one used nothing).
    expect(trace.body.usage).toEqual({ input_tokens: 24, output_tokens: 6 });
    expect(trace.body.cost_usd).toBeCloseTo((24 * 0.4 + 6 * 1.6) / 1e6, 12);
    expect(listed.body.traces[0]).toMatchObject({ usage: { input_tokens: 24, output_tokens: 6 }, cost_usd: trace.body.cost_usd });
    const unpriced = await request('GET', '/traces/follow-1?payloads=false', { token });
    expect(unpriced.status).toBe(404);
  });
});

describe('GET /traces/{invocation_key}/spans/{span_id}', () => {
  it('reads one span with its payloads, as the trace shows it, and marks a superseded one', async () => {
    const { token } = await newOrganization();
    const other = await newOrganization();
    model.enqueue(status(500, undefined, SOON), status(500, undefined, SOON), status(500, undefined, SOON), toolCall('lookup', { q: 'one' }), answer('two'));
    await start(token, 'sp1', 'span-1', 'spans');
    await follow(token, 'span-1', 100);
    const trace = await request('GET', '/traces/span-1?attempts=all', { token });

    for (const shown of trace.body.spans) {
      const one = await request('GET', `/traces/span-1/spans/${shown.id}`, { token });
      expect(one.status).toBe(200);
      expect(one.body).toEqual(shown);
    }
    expect(trace.body.spans[0].superseded).toBe(true);
    expect(trace.body.spans.at(-1).output).toBeDefined();

    for (const missing of ['inv-1.att-2.99', 'inv-2.att-2.1', 'nonsense', 'inv-1.att-9.1']) {
      expect((await request('GET', `/traces/span-1/spans/${missing}`, { token })).status, missing).toBe(404);
    }
    expect((await request('GET', '/traces/no-such/spans/inv-1.att-1.1', { token })).status).toBe(404);
    expect((await request('GET', '/traces/span-1/spans/inv-1.att-2.1', { token: other.token })).status).toBe(404);
    expect((await request('GET', '/traces/span-1/spans/inv-1.att-2.1')).status).toBe(401);
  });
});
