import { beforeAll, describe, expect, it } from 'vitest';
import { ListTracesResponse } from '#contracts/traces';
import { sha256 } from '#kit/ids';
import { acceptInvocation, getSession, recordOutcome } from '#data/invocations';
import type { Invocation } from '#core/model';
import { batchPut, invocationItem, sessionItem } from '../seed/traces';
import { newOrganization, request } from './support';

const MINUTE = 60_000;
const DAY = 86_400_000;

interface Seed {
  key: string;
  session: string;
  name?: string;
  revision?: string;
  /** How long ago it started. */
  ago: number;
  outcome?: 'SUCCEEDED' | 'FAILED';
}

/** Accepts an invocation that started `ago` ms ago and records its outcome, as the run path does. */
async function invoke(organizationId: string, seed: Seed): Promise<void> {
  const seen = await getSession(organizationId, seed.session);
  const invocation = {
    invocation_key: seed.key,
    session_id: seed.session,
    session_position: (seen?.invocation_count ?? 0) + 1,
    status: 'RUNNING',
    ...(seed.name ? { agent_name: seed.name } : {}),
    ...(seed.revision ? { agent_revision: seed.revision } : {}),
    body_sha256: sha256(seed.key),
    started_at: new Date(Date.now() - seed.ago).toISOString(),
    user_cursor: (seen?.message_count ?? 0) + 1,
  } as Invocation;
  if (!seed.name) {
    // Acceptance always records a name now: an older invocation without one is written as stored.
    const ended = seed.outcome ? { status: seed.outcome, ended_at: new Date().toISOString() } : {};
    await batchPut([invocationItem(organizationId, { ...invocation, ...ended }), sessionItem(organizationId, seed.session, 1, invocation.started_at)]);
    return;
  }
  expect(await acceptInvocation({ organizationId, invocation, userPrompt: 'p', quota: 1000, seen })).toBeUndefined();
  if (seed.outcome) await finish(organizationId, invocation, seed.outcome);
}

async function finish(organizationId: string, invocation: Invocation, outcome: 'SUCCEEDED' | 'FAILED'): Promise<void> {
  const session = (await getSession(organizationId, invocation.session_id))!;
  const usage = { input_tokens: 0, output_tokens: 0 };
  const result = outcome === 'SUCCEEDED' ? { answer: 'a' } : { failure: { kind: 'crash' as const, message: 'died' } };
  expect(await recordOutcome({ organizationId, invocation, endedAt: new Date().toISOString(), messageCount: session.message_count, usage, ...result })).toBe(true);
}

/** GET /traces with a query, its 200 body checked against the contract. */
async function search(token: string, query: Record<string, string> = {}) {
  const response = await request('GET', `/traces?${new URLSearchParams(query)}`, { token });
  if (response.status === 200) ListTracesResponse.parse(response.body);
  return response;
}

const keysOf = (body: { traces: { invocation_key: string }[] }) => body.traces.map((t) => t.invocation_key);

/** Every key over all pages, following `next_cursor` with `repeat` sent again on every later page. */
async function allKeys(token: string, query: Record<string, string>, repeat: Record<string, string> = {}) {
  const found: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    // The limit is no filter: later pages may send it without repeating the filters.
    const response = await search(token, after ? { ...(query.limit ? { limit: query.limit } : {}), ...repeat, after } : query);
    expect(response.status).toBe(200);
    found.push(...keysOf(response.body));
    after = response.body.next_cursor;
    pages++;
  } while (after);
  return { found, pages };
}

describe('GET /traces', () => {
  let token: string;
  let organizationId: string;

  beforeAll(async () => {
    ({ token, organizationId } = await newOrganization());
    const seeds: Seed[] = [
      { key: 'k6', session: 's-d', name: 'alpha', revision: 'r1', ago: 40 * DAY, outcome: 'SUCCEEDED' },
      { key: 'k1', session: 's-a', name: 'alpha', revision: 'r1', ago: 10 * MINUTE, outcome: 'SUCCEEDED' },
      { key: 'k2', session: 's-a', name: 'alpha', revision: 'r2', ago: 9 * MINUTE, outcome: 'FAILED' },
      { key: 'k3', session: 's-b', name: 'beta', revision: 'r1', ago: 8 * MINUTE, outcome: 'SUCCEEDED' },
      { key: 'k4', session: 's-b', name: 'beta', revision: 'r3', ago: 7 * MINUTE },
      { key: 'k5', session: 's-c', ago: 6 * MINUTE, outcome: 'SUCCEEDED' },
    ];
    for (const seed of seeds) await invoke(organizationId, seed);
    // Another organization's invocation matches the same filters and must never show.
    const other = await newOrganization();
    await invoke(other.organizationId, { key: 'theirs', session: 's-a', name: 'alpha', revision: 'r1', ago: 5 * MINUTE, outcome: 'SUCCEEDED' });
  });

  it('lists the last 31 days newest first, with the summary fields', async () => {
    const { status, body } = await search(token);

    expect(status).toBe(200);
    expect(keysOf(body)).toEqual(['k5', 'k4', 'k3', 'k2', 'k1']);
    expect(body.next_cursor).toBeUndefined();
    expect(body.traces[1]).toEqual({
      invocation_key: 'k4', session_id: 's-b', agent_name: 'beta', agent_revision: 'r3', status: 'RUNNING', spans_expired: false, started_at: expect.any(String),
      usage: { input_tokens: 0, output_tokens: 0 },
    });
    expect(body.traces[2]).toMatchObject({ status: 'SUCCEEDED', ended_at: expect.any(String) });
    // Recorded without a name or revision: the summary has neither.
    expect(Object.keys(body.traces[0]).sort()).toEqual(['ended_at', 'invocation_key', 'session_id', 'spans_expired', 'started_at', 'status', 'usage']);
  });

  it.each([
    [{ agent_name: 'alpha' }, ['k2', 'k1']],
    [{ agent_revision: 'r1' }, ['k3', 'k1']],
    [{ agent_name: 'alpha', agent_revision: 'r1' }, ['k1']],
    [{ agent_name: 'beta', agent_revision: 'r2' }, []],
    [{ agent_name: 'gamma' }, []],
    [{ status: 'FAILED' }, ['k2']],
    [{ status: 'RUNNING' }, ['k4']],
    [{ status: 'SUCCEEDED' }, ['k5', 'k3', 'k1']],
    [{ session_id: 's-a' }, ['k2', 'k1']],
    [{ session_id: 's-a', status: 'SUCCEEDED' }, ['k1']],
    [{ session_id: 's-b', agent_revision: 'r3', agent_name: 'beta', status: 'RUNNING' }, ['k4']],
  ])('filters by %j', async (query, expected) => {
    const { status, body } = await search(token, query);

    expect(status).toBe(200);
    expect(keysOf(body)).toEqual(expected);
  });

  it('takes a window: since reaches further back, since and until narrow it', async () => {
    const wide = await search(token, { since: new Date(Date.now() - 50 * DAY).toISOString(), agent_name: 'alpha' });
    const narrow = await search(token, {
      since: new Date(Date.now() - 9.5 * MINUTE).toISOString(),
      // A numeric offset names the same instant.
      until: new Date(Date.now() - 7.5 * MINUTE + 2 * 3_600_000).toISOString().replace('Z', '+02:00'),
    });

    expect(keysOf(wide.body)).toEqual(['k2', 'k1', 'k6']);
    expect(keysOf(narrow.body)).toEqual(['k3', 'k2']);
  });

  it.each([
    [{ since: '2025-01-02T00:00:00Z', until: '2025-01-01T00:00:00Z' }, /until/],
    [{ since: '2025-01-01T00:00:00Z', until: '2025-01-01T00:00:00Z' }, /until/],
    [{ until: new Date(Date.now() - 40 * DAY).toISOString() }, /until/],
    [{ since: 'yesterday' }, /since/],
    [{ status: 'DONE' }, /status/],
    [{ limit: '0' }, /limit/],
    [{ limit: '101' }, /limit/],
    [{ session_id: 'x' }, /session_id/],
    [{ agent_name: 'n'.repeat(256) }, /agent_name/],
  ])('refuses %j with 400', async (query, message) => {
    const { status, body } = await search(token, query);

    expect(status).toBe(400);
    expect(body.message).toMatch(message);
  });

  it('answers 404 for a session the organization does not have', async () => {
    const { status } = await search(token, { session_id: 'no-such-session' });

    expect(status).toBe(404);
  });

  it('pages with a cursor: every invocation once, in order, with no filters or the same ones repeated', async () => {
    const bare = await allKeys(token, { limit: '2' });
    const repeated = await allKeys(token, { limit: '1', agent_name: 'alpha', since: '2000-01-01T00:00:00Z' }, { agent_name: 'alpha', since: '2000-01-01T00:00:00.000Z' });

    expect(bare).toEqual({ found: ['k5', 'k4', 'k3', 'k2', 'k1'], pages: 3 });
    expect(repeated).toEqual({ found: ['k2', 'k1', 'k6'], pages: 3 });
  });

  it('refuses a cursor sent with other filters, a tampered one, another organization one and a trace cursor', async () => {
    const first = await search(token, { limit: '1', agent_name: 'alpha' });
    const cursor = first.body.next_cursor as string;
    const stranger = await newOrganization();
    const [payload, signature] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), given: {} })).toString('base64url');
    const traceCursor = (await request('GET', '/traces/k4?payloads=false', { token })).body.next_cursor;

    const changes: Record<string, string>[] = [{ agent_name: 'beta' }, { agent_name: 'alpha', status: 'FAILED' }, { status: 'FAILED' }, { agent_name: 'alpha', since: '2020-01-01T00:00:00Z' }];
    for (const changed of changes) {
      const { status, body } = await search(token, { ...changed, after: cursor });
      expect(status, JSON.stringify(changed)).toBe(400);
      expect(body.message).toMatch(/filters/);
    }
    expect((await search(token, { after: `${forged}.${signature}` })).status).toBe(400);
    expect((await search(stranger.token, { after: cursor })).status).toBe(400);
    expect(traceCursor).toEqual(expect.any(String));
    expect((await search(token, { after: traceCursor })).status).toBe(400);
    expect(keysOf((await search(token, { after: cursor, agent_name: 'alpha' })).body)).toEqual(['k1']);
  });

  it('moves an invocation to its outcome status when the outcome is recorded', async () => {
    const { organizationId: org, token: own } = await newOrganization();
    await invoke(org, { key: 'live', session: 's', name: 'n', revision: 'r', ago: MINUTE });
    expect(keysOf((await search(own, { status: 'RUNNING' })).body)).toEqual(['live']);

    await finish(org, { invocation_key: 'live', session_id: 's' } as Invocation, 'FAILED');

    expect(keysOf((await search(own, { status: 'RUNNING' })).body)).toEqual([]);
    expect(keysOf((await search(own, { status: 'FAILED' })).body)).toEqual(['live']);
  });

  it('keeps reading past filtered-out invocations until the page is full', async () => {
    const { organizationId: org, token: own } = await newOrganization();
    const failed = new Set([3, 17, 28]);
    for (let i = 0; i < 30; i++) {
      await invoke(org, { key: `busy-${i}`, session: 'busy', name: 'busy', revision: 'r', ago: (60 - i) * MINUTE, outcome: failed.has(i) ? 'FAILED' : 'SUCCEEDED' });
    }

    const { found } = await allKeys(own, { agent_name: 'busy', status: 'FAILED', limit: '2' });
    const first = await search(own, { agent_name: 'busy', status: 'FAILED', limit: '2' });

    expect(found).toEqual(['busy-28', 'busy-17', 'busy-3']);
    expect(keysOf(first.body)).toEqual(['busy-28', 'busy-17']);
  });
});
