import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// Revisions are recorded when a run is accepted, so these tests run agents end to end
// against a fake model (which echoes the prompt when nothing is queued) and read back.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const agent = (extra: Record<string, unknown> = {}) => ({
  model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } },
  ...extra,
});

/** Runs `config` as `name` in a session of its own; returns the revision it ran as and when. */
async function run(token: string, name: string, config: Record<string, unknown>) {
  const before = new Date().toISOString();
  const res = await request('POST', `/sessions/s-${Math.random().toString(36).slice(2)}`, {
    token,
    body: { user_prompt: 'Hello', agent_name: name, agent: config },
  });
  expect(res.status).toBe(200);
  return { revision: res.body.session.agent_revision as string, before, after: new Date().toISOString() };
}

const path = (name: string, revision?: string) =>
  `/agents/${encodeURIComponent(name)}${revision === undefined ? '' : `/revisions/${revision}`}`;

describe('/agents', () => {
  it('records one revision per configuration, newest first, each dated by its first run', async () => {
    const { token } = await newOrganization();
    const first = await run(token, 'helper', agent());
    const again = await run(token, 'helper', agent());
    const detailAfterOne = await request('GET', path('helper'), { token });
    const second = await run(token, 'helper', agent({ system_prompt: 'Be brief.' }));
    const third = await run(token, 'helper', agent());

    const detail = await request('GET', path('helper'), { token });
    const listed = await request('GET', '/agents', { token });

    expect(again.revision).toBe(first.revision);
    expect(detailAfterOne.body.revisions).toHaveLength(1);
    expect(second.revision).not.toBe(first.revision);
    expect(third.revision).toBe(first.revision);
    expect(detail.status).toBe(200);
    expect(detail.body.name).toBe('helper');
    expect(detail.body.revisions.map((r: { revision: string }) => r.revision)).toEqual([second.revision, first.revision]);
    const [newer, older] = detail.body.revisions;
    // A revision is dated by its first run: later runs of it change nothing.
    expect(older.created_at).toBe(detailAfterOne.body.revisions[0].created_at);
    expect(older.created_at >= first.before && older.created_at <= first.after).toBe(true);
    expect(newer.created_at >= second.before && newer.created_at <= second.after).toBe(true);
    // `current` is the revision of the latest run, even when that is an older revision.
    expect(detail.body.current).toEqual({ revision: first.revision, created_at: older.created_at, config: agent() });
    expect(listed.status).toBe(200);
    expect(listed.body.agents).toEqual([
      { name: 'helper', revision_count: 2, created_at: older.created_at, updated_at: expect.any(String) },
    ]);
    expect(listed.body.agents[0].updated_at >= third.before && listed.body.agents[0].updated_at <= third.after).toBe(true);
  });

  it('returns one revision with its configuration, which shows secret references and never values', async () => {
    const { token } = await newOrganization();
    const value = 'sk-agents-canary-5d2f81c4';
    expect((await request('POST', '/secrets', { token, body: { name: 'MODEL_KEY', value } })).status).toBe(201);
    const config = { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, credential: '{{secret:MODEL_KEY}}' } } };
    const { revision, before, after } = await run(token, 'keyed', config);

    const read = await request('GET', path('keyed', revision), { token });
    const detail = await request('GET', path('keyed'), { token });

    expect(read.status).toBe(200);
    expect(read.body).toEqual({ revision, created_at: expect.any(String), config });
    expect(read.body.created_at >= before && read.body.created_at <= after).toBe(true);
    expect(read.body.config.model.provider.credential).toBe('{{secret:MODEL_KEY}}');
    expect(detail.body.current).toEqual(read.body);
    expect(JSON.stringify([read.body, detail.body])).not.toContain(value);
  });

  it('lists agents by name and reads names that need percent-encoding', async () => {
    const { token } = await newOrganization();
    await run(token, 'beta', agent());
    await run(token, 'team/alpha bot', agent());

    const listed = await request('GET', '/agents', { token });
    const detail = await request('GET', path('team/alpha bot'), { token });

    expect(listed.body.agents.map((a: { name: string }) => a.name)).toEqual(['beta', 'team/alpha bot']);
    expect(listed.body.agents.map((a: { revision_count: number }) => a.revision_count)).toEqual([1, 1]);
    expect(detail.status).toBe(200);
    expect(detail.body.name).toBe('team/alpha bot');
  });

  it("answers 404 for an unknown name or revision and for another organization's agent", async () => {
    const owner = await newOrganization();
    const other = await newOrganization();
    const { revision } = await run(owner.token, 'private', agent());
    const unknownRevision = revision === '0123456789abcdef' ? 'fedcba9876543210' : '0123456789abcdef';

    const responses = [
      await request('GET', path('never-ran'), { token: owner.token }),
      await request('GET', path('never-ran', revision), { token: owner.token }),
      await request('GET', path('private', unknownRevision), { token: owner.token }),
      await request('GET', path('private'), { token: other.token }),
      await request('GET', path('private', revision), { token: other.token }),
    ];
    const otherList = await request('GET', '/agents', { token: other.token });

    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    expect(otherList.status).toBe(200);
    expect(otherList.body).toEqual({ agents: [] });
  });

  it('answers 400 for a name longer than 255 characters or a malformed revision', async () => {
    const { token } = await newOrganization();
    const long = 'n'.repeat(256);

    const responses = [
      await request('GET', path(long), { token }),
      await request('GET', path(long, '0123456789abcdef'), { token }),
      await request('GET', path('helper', '0123456789ABCDEF'), { token }),
      await request('GET', path('helper', '0123456789abcde'), { token }),
      await request('GET', path('helper', '0123456789abcdef0'), { token }),
      await request('GET', path('helper', 'not-a-revision!!'), { token }),
    ];

    for (const res of responses) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    expect((await request('GET', path('n'.repeat(255)), { token })).status).toBe(404);
  });

  it('answers 401 without a credential', async () => {
    for (const target of ['/agents', path('helper'), path('helper', '0123456789abcdef')]) {
      const res = await request('GET', target);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
  });
});
