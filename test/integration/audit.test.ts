import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, startFakeOpenAI, status, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// The audit log through the local gateway, written by real runs against a fake model.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const body = (prompt = 'Say hello') => ({
  user_prompt: prompt,
  agent_name: 'auditor',
  agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } },
});

const run = (token: string, sessionId: string, key: string, prompt?: string) =>
  request('POST', `/sessions/${sessionId}`, { token, headers: { 'idempotency-key': key }, body: body(prompt) });

const audit = (token: string, sessionId: string, query = '') => request('GET', `/sessions/${sessionId}/audit${query}`, { token });

describe('GET /sessions/{id}/audit', () => {
  it('lists the events of a successful run in event time order', async () => {
    const { token } = await newOrganization();
    model.enqueue(answer('Hello'));
    const ran = await run(token, 'audited', 'a1');

    const res = await audit(token, 'audited');

    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['agent_invocation', 'llm_call', 'run_succeeded']);
    expect(res.body.next_cursor).toBeUndefined();
    for (const event of res.body.events) {
      expect(event).toEqual({
        id: expect.any(String),
        session_id: 'audited',
        invocation_key: 'a1',
        type: expect.any(String),
        payload: expect.any(Object),
        event_time: expect.any(String),
        agent_revision: ran.body.session.agent_revision,
      });
    }
    const times = res.body.events.map((e: { event_time: string }) => e.event_time);
    expect([...times].sort()).toEqual(times);
  });

  it('ends a failed run with run_failed', async () => {
    const { token } = await newOrganization();
    model.enqueue(status(401, { error: { message: 'bad key' } }));
    expect((await run(token, 'audit-fail', 'f1')).status).toBe(502);

    const res = await audit(token, 'audit-fail');

    const types = res.body.events.map((e: { type: string }) => e.type);
    expect(types[0]).toBe('agent_invocation');
    expect(types.at(-1)).toBe('run_failed');
    expect(res.body.events.at(-1).payload.failure).toMatchObject({ kind: 'interrupted' });
  });

  it('pages with limit and next_cursor, every event exactly once and in order', async () => {
    const { token } = await newOrganization();
    for (let i = 1; i <= 3; i++) await run(token, 'audit-pages', `p${i}`, `prompt ${i}`);
    const all = (await audit(token, 'audit-pages', '?limit=1000')).body.events;
    expect(all).toHaveLength(9);

    const paged = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await audit(token, 'audit-pages', `?limit=2${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      paged.push(...res.body.events);
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor);

    expect(paged).toEqual(all);
    expect(pages).toBe(5);
  });

  it('answers 400 for a tampered, foreign or other-list cursor and a bad limit', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    for (const { token } of [first, second]) {
      await run(token, 'shared-id', 'x1');
      await run(token, 'shared-id', 'x2');
      await run(token, 'other-id', 'x3');
    }
    const cursor: string = (await audit(first.token, 'shared-id', '?limit=1')).body.next_cursor;
    const [payload, signature] = cursor.split('.') as [string, string];
    const forged = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(first.organizationId, second.organizationId)).toString('base64url');
    const sessionsCursor: string = (await request('GET', '/sessions?limit=1', { token: first.token })).body.next_cursor;
    expect(sessionsCursor).toEqual(expect.any(String));

    const statusOf = async (token: string, sessionId: string, query: string) => (await audit(token, sessionId, query)).status;
    expect(await statusOf(first.token, 'shared-id', `?after=${encodeURIComponent(cursor)}`)).toBe(200);
    expect(await statusOf(first.token, 'shared-id', `?after=${cursor.slice(0, -2)}xx`)).toBe(400);
    expect(await statusOf(first.token, 'shared-id', `?after=${forged}.${signature}`)).toBe(400);
    expect(await statusOf(first.token, 'shared-id', '?after=garbage')).toBe(400);
    expect(await statusOf(second.token, 'shared-id', `?after=${encodeURIComponent(cursor)}`)).toBe(400);
    expect(await statusOf(first.token, 'other-id', `?after=${encodeURIComponent(cursor)}`)).toBe(400);
    expect(await statusOf(first.token, 'shared-id', `?after=${encodeURIComponent(sessionsCursor)}`)).toBe(400);
    expect(await statusOf(first.token, 'shared-id', '?limit=0')).toBe(400);
    expect(await statusOf(first.token, 'shared-id', '?limit=1001')).toBe(400);
  });

  it('answers 404 for an unknown or foreign session and 401 without credential', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    await run(first.token, 'private', 'k');

    expect((await audit(first.token, 'nope')).status).toBe(404);
    expect((await audit(second.token, 'private')).status).toBe(404);
    expect((await request('GET', '/sessions/private/audit')).status).toBe(401);
  });
});
