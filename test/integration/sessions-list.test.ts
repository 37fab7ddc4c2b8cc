import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// GET /sessions reads the sessions index, newest updated_at first.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const run = (token: string, sessionId: string) =>
  request('POST', `/sessions/${sessionId}`, {
    token,
    body: { user_prompt: `hello ${sessionId}`, agent_name: 'lister', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } } },
  });

const ids = (res: { body: { sessions: { id: string }[] } }) => res.body.sessions.map((s) => s.id);

describe('GET /sessions', () => {
  it('lists the organization sessions newest updated_at first, and only them', async () => {
    const { token } = await newOrganization();
    const other = await newOrganization();
    for (const id of ['first', 'second', 'third']) expect((await run(token, id)).status).toBe(200);
    await run(other.token, 'foreign');

    const listed = await request('GET', '/sessions', { token });
    await run(token, 'first');
    const after = await request('GET', '/sessions', { token });

    expect(listed.status).toBe(200);
    expect(ids(listed)).toEqual(['third', 'second', 'first']);
    expect(listed.body.next_cursor).toBeUndefined();
    expect(listed.body.sessions[0]).toMatchObject({ id: 'third', state: 'IDLE', invocation_count: 1, agent_name: 'lister' });
    expect(ids(after)).toEqual(['first', 'third', 'second']);
    expect(after.body.sessions[0].invocation_count).toBe(2);
  });

  it('pages with limit and next_cursor', async () => {
    const { token } = await newOrganization();
    for (const id of ['s1', 's2', 's3', 's4', 's5']) await run(token, id);

    const first = await request('GET', '/sessions?limit=2', { token });
    const second = await request('GET', `/sessions?limit=2&after=${encodeURIComponent(first.body.next_cursor)}`, { token });
    const last = await request('GET', `/sessions?limit=2&after=${encodeURIComponent(second.body.next_cursor)}`, { token });

    expect([ids(first), ids(second), ids(last)]).toEqual([['s5', 's4'], ['s3', 's2'], ['s1']]);
    expect(last.body.next_cursor).toBeUndefined();
  });

  it('answers 400 for a bad, foreign or audit cursor and a bad limit, 401 without credential', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    for (const id of ['aa', 'bb']) expect((await run(first.token, id)).status).toBe(200);
    const cursor: string = (await request('GET', '/sessions?limit=1', { token: first.token })).body.next_cursor;
    const auditCursor: string = (await request('GET', '/sessions/aa/audit?limit=1', { token: first.token })).body.next_cursor;

    const statusOf = async (token: string | undefined, query: string) => (await request('GET', `/sessions${query}`, { token })).status;
    expect(await statusOf(first.token, `?after=${encodeURIComponent(cursor)}`)).toBe(200);
    expect(await statusOf(first.token, `?after=${cursor.slice(0, -2)}xx`)).toBe(400);
    expect(await statusOf(second.token, `?after=${encodeURIComponent(cursor)}`)).toBe(400);
    expect(await statusOf(first.token, `?after=${encodeURIComponent(auditCursor)}`)).toBe(400);
    expect(await statusOf(first.token, '?limit=0')).toBe(400);
    expect(await statusOf(first.token, '?limit=1001')).toBe(400);
    expect(await statusOf(undefined, '')).toBe(401);
  });
});
