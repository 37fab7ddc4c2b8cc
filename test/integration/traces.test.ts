import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { GetTraceResponse } from '#contracts/traces';
import { attemptStore } from '#data/attempts';
import { finishInvocation, settleFailedAttempt, startNextAttempt } from '#core/attempts';
import { config } from '#kit/config';
import { sha256 } from '#kit/ids';
import { acceptanceStore } from '#data/acceptance';
import { acceptRun } from '#core/runs';
import { endAttempt } from '#data/attempts';
import { acceptInvocation, getInvocation } from '#data/invocations';
import type { Invocation } from '#core/model';
import { payloadKey, s3 } from '#data/payloads';
import { spanStore } from '#data/spans';
import { answer, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { seedSpans } from '../seed/traces';
import { newOrganization, request } from './support';

const agent: AgentConfig = { model: { name: 'gpt-test', provider: { name: 'openai' } } };

type Trace = ReturnType<typeof GetTraceResponse.parse>;

/** GET /traces/{key}, its body checked against the contract when it is a 200. */
async function trace(token: string, key: string, query: Record<string, string> = {}) {
  const search = new URLSearchParams(query).toString();
  const response = await request('GET', `/traces/${encodeURIComponent(key)}${search ? `?${search}` : ''}`, { token });
  if (response.status === 200) GetTraceResponse.parse(response.body);
  return response;
}

/** Every span of a trace, following `next_cursor` until it is absent. */
async function allPages(token: string, key: string, query: Record<string, string>) {
  const pages: Trace[] = [];
  let after: string | undefined;
  do {
    const response = await trace(token, key, { ...query, ...(after ? { after } : {}) });
    expect(response.status).toBe(200);
    pages.push(response.body);
    after = response.body.next_cursor;
  } while (after);
  return pages;
}

/** An accepted invocation, recorded straight through the domain layer (no execution runs it). */
async function accepted(invocationKey = 'k1', sessionId = 's1') {
  const organization = await newOrganization();
  const { invocation } = await acceptRun(acceptanceStore(organization.organizationId), {
    organizationId: organization.organizationId, sessionId, invocationKey, rawBody: '{}', agentName: 'tracer', agent, userPrompt: 'question?',
  });
  return { ...organization, invocation };
}

describe('GET /traces/{invocation_key} of a run', () => {
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await startFakeOpenAI();
  });

  afterAll(() => model.close());

  it('answers the summary, the spans oldest first with payloads, and the attempt with its usage', async () => {
    const { token } = await newOrganization();
    model.enqueue(toolCall('lookup', { q: 'weather' }), answer('It is sunny'));
    const run = await request('POST', '/sessions/traced', {
      token,
      headers: { 'idempotency-key': 'run-1' },
      body: { user_prompt: 'Weather?', agent_name: 'weatherman', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } } },
    });
    expect(run.status).toBe(200);

    const { status, body } = await trace(token, 'run-1');

    expect(status).toBe(200);
    expect(body).toMatchObject({
      invocation_key: 'run-1',
      session_id: 'traced',
      agent_name: 'weatherman',
      agent_revision: run.body.session.agent_revision,
      status: 'SUCCEEDED',
      spans_expired: false,
      session_position: 1,
    });
    expect(Date.parse(body.ended_at)).toBeGreaterThanOrEqual(Date.parse(body.started_at));
    expect(body.failure).toBeUndefined();
    expect(body.next_cursor).toBeUndefined();
    expect(body.spans.map((s: Trace['spans'][number]) => [s.id, s.type, s.name, s.parent_id, s.status])).toEqual([
      ['inv-1.att-1.1', 'model_call', 'gpt-fake', null, 'SUCCEEDED'],
      ['inv-1.att-1.2', 'tool_call', 'lookup', 'inv-1.att-1.1', 'FAILED'],
      ['inv-1.att-1.3', 'model_call', 'gpt-fake', null, 'SUCCEEDED'],
    ]);
    const [call, tool] = body.spans;
    expect(call.usage).toEqual({ input_tokens: 12, output_tokens: 3 });
    expect(tool.usage).toBeNull();
    expect(tool.input).toEqual({ q: 'weather' });
    expect(tool.output).toEqual({ error: expect.stringContaining('unknown tool "lookup"') });
    expect(call.input.model).toBe('gpt-fake');
    for (const span of body.spans) {
      for (const part of ['input', 'output'] as const) {
        const text = JSON.stringify(span[part]);
        expect(span[`${part}_bytes`]).toBe(Buffer.byteLength(text));
        expect(span[`${part}_sha256`]).toBe(sha256(text));
        expect(span[`${part}_truncated`]).toBe(false);
      }
    }
    expect(body.attempts).toEqual([
      { number: 1, status: 'SUCCEEDED', started_at: expect.any(String), ended_at: expect.any(String), usage: { input_tokens: 24, output_tokens: 6 } },
    ]);
  });

  it('leaves payloads and their descriptors out with payloads=false', async () => {
    const { token } = await newOrganization();
    model.enqueue(answer('Hello'));
    await request('POST', '/sessions/bare', {
      token,
      headers: { 'idempotency-key': 'bare-1' },
      body: { user_prompt: 'Hi', agent_name: 'a', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } } },
    });

    const { body } = await trace(token, 'bare-1', { payloads: 'false' });

    expect(body.spans).toHaveLength(1);
    expect(Object.keys(body.spans[0]).sort()).toEqual(['ended_at', 'id', 'name', 'parent_id', 'started_at', 'status', 'type', 'usage']);
  });
});

describe('GET /traces/{invocation_key} across attempts', () => {
  /** Attempt 1 fails after two spans, attempt 2 succeeds after one. */
  async function twoAttempts() {
    const { token, organizationId, invocation } = await accepted();
    const spans = spanStore(organizationId, invocation, 1);
    await startNextAttempt(attemptStore(organizationId), 'k1');
    await spans.start({ id: 'inv-1.att-1.1', type: 'model_call', name: 'm', parent_id: null, input: { try: 1 } });
    await spans.end('inv-1.att-1.1', { status: 'SUCCEEDED', output: { calls: ['t'] }, usage: { input_tokens: 5, output_tokens: 1 } });
    await spans.start({ id: 'inv-1.att-1.2', type: 'tool_call', name: 't', parent_id: 'inv-1.att-1.1', input: {} });
    spans.progress({ steps: 1, usage: { input_tokens: 5, output_tokens: 1 } });
    await spans.flush();
    expect((await settleFailedAttempt(attemptStore(organizationId), 'k1', { Error: 'States.Timeout' })).retry).toBe(true);
    await startNextAttempt(attemptStore(organizationId), 'k1');
    const second = spanStore(organizationId, invocation, 2);
    await second.start({ id: 'inv-1.att-2.1', type: 'model_call', name: 'm', parent_id: null, input: { try: 2 } });
    await second.end('inv-1.att-2.1', { status: 'SUCCEEDED', output: 'answer', usage: { input_tokens: 7, output_tokens: 2 } });
    second.progress({ steps: 1, usage: { input_tokens: 7, output_tokens: 2 } });
    await second.flush();
    await endAttempt(organizationId, 'k1', 2, { status: 'SUCCEEDED', answer: 'answer', ended_at: new Date().toISOString() });
    await finishInvocation(attemptStore(organizationId), 'k1');
    return { token, organizationId };
  }

  it('shows the final attempt spans by default and lists every attempt with its outcome and usage', async () => {
    const { token } = await twoAttempts();

    const { body } = await trace(token, 'k1');

    expect(body.status).toBe('SUCCEEDED');
    expect(body.spans.map((s: Trace['spans'][number]) => [s.id, s.superseded])).toEqual([['inv-1.att-2.1', undefined]]);
    expect(body.attempts).toEqual([
      expect.objectContaining({ number: 1, status: 'FAILED', failure: { kind: 'no_progress', message: expect.any(String) }, usage: { input_tokens: 5, output_tokens: 1 } }),
      expect.objectContaining({ number: 2, status: 'SUCCEEDED', usage: { input_tokens: 7, output_tokens: 2 } }),
    ]);
    expect(body.attempts[1].failure).toBeUndefined();
  });

  it('adds the earlier attempt spans, marked superseded, with attempts=all', async () => {
    const { token } = await twoAttempts();

    const { body } = await trace(token, 'k1', { attempts: 'all' });

    expect(body.spans.map((s: Trace['spans'][number]) => [s.id, s.status, s.superseded])).toEqual([
      ['inv-1.att-1.1', 'SUCCEEDED', true],
      ['inv-1.att-1.2', 'RUNNING', true],
      ['inv-1.att-2.1', 'SUCCEEDED', undefined],
    ]);
    // A span cut off with its attempt has no output and no end yet.
    expect(body.spans[1]).toMatchObject({ ended_at: null, output: null });
    expect(body.spans[1].output_bytes).toBeUndefined();
    expect(body.attempts).toHaveLength(2);
  });

  it('shows the failure of a failed invocation', async () => {
    const { token, organizationId } = await accepted();
    await startNextAttempt(attemptStore(organizationId), 'k1');
    await settleFailedAttempt(attemptStore(organizationId), 'k1', { Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (1) reached"}' });
    await finishInvocation(attemptStore(organizationId), 'k1');

    const { body } = await trace(token, 'k1');

    expect(body).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted', message: 'max_steps (1) reached' }, spans: [] });
    expect(body.attempts).toEqual([expect.objectContaining({ number: 1, status: 'FAILED' })]);
  });
});

describe('GET /traces/{invocation_key} paging', () => {
  const SPANS = 520;
  let token: string;
  let organizationId: string;

  beforeAll(async () => {
    const seeded = await accepted('big');
    ({ token, organizationId } = seeded);
    await startNextAttempt(attemptStore(seeded.organizationId), 'big');
    await seedSpans(seeded.organizationId, seeded.invocation, { attempt: 1, count: SPANS });
    await endAttempt(seeded.organizationId, 'big', 1, { status: 'SUCCEEDED', answer: 'done', ended_at: new Date().toISOString() });
    await finishInvocation(attemptStore(seeded.organizationId), 'big');
  });

  const expected = Array.from({ length: SPANS }, (_, i) => `inv-1.att-1.${i + 1}`);

  it('returns every span exactly once, in order, in pages of up to 500 without payloads', async () => {
    const pages = await allPages(token, 'big', { payloads: 'false' });

    expect(pages.map((page) => page.spans.length)).toEqual([500, 20]);
    expect(pages.flatMap((page) => page.spans.map((span) => span.id))).toEqual(expected);
  });

  it('returns every span exactly once, in order, in pages of 25 with payloads (the cursor keeps the mode)', async () => {
    const pages = await allPages(token, 'big', {});

    expect(pages).toHaveLength(Math.ceil(SPANS / 25));
    expect(pages.slice(0, -1).every((page) => page.spans.length === 25)).toBe(true);
    expect(pages.flatMap((page) => page.spans.map((span) => span.id))).toEqual(expected);
    expect(pages.flatMap((page) => page.spans.map((span) => (span.input as { seq: number }).seq))).toEqual(expected.map((_, i) => i + 1));
  });

  it('takes a smaller limit in either mode', async () => {
    const first = await trace(token, 'big', { payloads: 'false', limit: '7' });
    const second = await trace(token, 'big', { payloads: 'false', limit: '7', after: first.body.next_cursor });

    expect(second.body.spans.map((span: { id: string }) => span.id)).toEqual(expected.slice(7, 14));
    expect((await trace(token, 'big', { limit: '3' })).body.spans).toHaveLength(3);
  });

  it.each([
    [{ limit: '26' }, /at most 25/],
    [{ payloads: 'true', limit: '500' }, /at most 25/],
    [{ payloads: 'false', limit: '501' }, /limit/],
    [{ limit: '0' }, /limit/],
    [{ payloads: 'yes' }, /payloads/],
    [{ attempts: 'latest' }, /attempts/],
  ])('refuses %j with 400', async (query, message) => {
    const { status, body } = await trace(token, 'big', query);

    expect(status).toBe(400);
    expect(body.message).toMatch(message);
  });

  it('refuses a cursor used with the other payloads mode, or with another limit bound', async () => {
    const bare = await trace(token, 'big', { payloads: 'false', limit: '100' });
    const full = await trace(token, 'big', { limit: '5' });

    expect((await trace(token, 'big', { payloads: 'true', after: bare.body.next_cursor })).status).toBe(400);
    expect((await trace(token, 'big', { payloads: 'false', after: full.body.next_cursor })).status).toBe(400);
    // Leaving payloads out keeps the cursor's mode, and so its bound.
    expect((await trace(token, 'big', { after: bare.body.next_cursor, limit: '100' })).body.spans).toHaveLength(100);
    expect((await trace(token, 'big', { after: full.body.next_cursor, limit: '100' })).status).toBe(400);
  });

  it('refuses a tampered cursor, a cursor of another list, and a cursor of another invocation', async () => {
    const { body } = await trace(token, 'big', { payloads: 'false', limit: '5' });
    const [payload, signature] = (body.next_cursor as string).split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sk: 'SPAN#001#000400' })).toString('base64url');
    const audit = await request('GET', '/sessions/s1/audit?limit=1', { token });
    expect(audit.body.next_cursor).toEqual(expect.any(String));
    const elsewhere = await trace(token, 'elsewhere');
    // Another organization with an invocation of the same key.
    const stranger = await accepted('big');

    expect((await trace(token, 'big', { payloads: 'false', after: `${forged}.${signature}` })).status).toBe(400);
    expect((await trace(token, 'big', { after: `${payload}.${signature!.slice(1)}x` })).status).toBe(400);
    expect((await trace(token, 'big', { after: 'not-a-cursor' })).status).toBe(400);
    expect((await trace(token, 'big', { after: audit.body.next_cursor })).status).toBe(400);
    expect(elsewhere.status).toBe(404);
    expect((await trace(stranger.token, 'big', { payloads: 'false', after: body.next_cursor })).status).toBe(400);
    expect((await trace(token, 'big', { payloads: 'false', after: body.next_cursor })).status).toBe(200);
  });

  it('refuses a cursor of another invocation of the same organization', async () => {
    await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId: 's2', invocationKey: 'big2', rawBody: '{}', agentName: 'tracer', agent, userPrompt: 'q' });
    const { body } = await trace(token, 'big', { payloads: 'false', limit: '5' });

    expect((await trace(token, 'big2', { payloads: 'false' })).status).toBe(200);
    expect((await trace(token, 'big2', { payloads: 'false', after: body.next_cursor })).status).toBe(400);
  });
});

describe('GET /traces/{invocation_key} while running', () => {
  it('shows spans as they are written and keeps a cursor until the invocation ends', async () => {
    const { token, organizationId, invocation } = await accepted();
    const before = await trace(token, 'k1');
    expect(before.body).toMatchObject({ status: 'RUNNING', spans: [] });
    expect(before.body.ended_at).toBeUndefined();
    expect(before.body.next_cursor).toEqual(expect.any(String));

    await startNextAttempt(attemptStore(organizationId), 'k1');
    const spans = spanStore(organizationId, invocation, 1);
    await spans.start({ id: 'inv-1.att-1.1', type: 'model_call', name: 'm', parent_id: null, input: { n: 1 } });
    const first = await trace(token, 'k1', { after: before.body.next_cursor });
    expect(first.body.spans).toEqual([expect.objectContaining({ id: 'inv-1.att-1.1', status: 'RUNNING', ended_at: null, input: { n: 1 }, output: null })]);
    expect(first.body.attempts).toEqual([expect.objectContaining({ number: 1, status: 'RUNNING' })]);

    const empty = await trace(token, 'k1', { after: first.body.next_cursor });
    expect(empty.body.spans).toEqual([]);
    expect(empty.body.next_cursor).toEqual(expect.any(String));

    await spans.end('inv-1.att-1.1', { status: 'SUCCEEDED', output: 'ok', usage: { input_tokens: 1, output_tokens: 1 } });
    await spans.start({ id: 'inv-1.att-1.2', type: 'tool_call', name: 't', parent_id: 'inv-1.att-1.1', input: {} });
    const second = await trace(token, 'k1', { after: empty.body.next_cursor });
    expect(second.body.spans.map((span: { id: string }) => span.id)).toEqual(['inv-1.att-1.2']);

    await spans.end('inv-1.att-1.2', { status: 'SUCCEEDED', output: 'tool result', usage: null });
    await endAttempt(organizationId, 'k1', 1, { status: 'SUCCEEDED', answer: 'a', ended_at: new Date().toISOString() });
    await finishInvocation(attemptStore(organizationId), 'k1');
    const last = await trace(token, 'k1', { after: second.body.next_cursor });
    expect(last.body.status).toBe('SUCCEEDED');
    expect(last.body.spans).toEqual([]);
    expect(last.body.next_cursor).toBeUndefined();
  });
});

describe('GET /traces/{invocation_key} payloads', () => {
  it('shortens a payload above 64 KiB to a 4 KiB preview, its descriptors describing the whole value', async () => {
    const { token, organizationId, invocation } = await accepted();
    await startNextAttempt(attemptStore(organizationId), 'k1');
    // Multi-byte characters, so the preview must not cut one in two.
    const big = { text: 'é€😀'.repeat(10_000) };
    const spans = spanStore(organizationId, invocation, 1);
    await spans.start({ id: 'inv-1.att-1.1', type: 'tool_call', name: 't', parent_id: null, input: { small: true } });
    await spans.end('inv-1.att-1.1', { status: 'SUCCEEDED', output: big, usage: null });

    const { body } = await trace(token, 'k1');

    const [span] = body.spans;
    const text = JSON.stringify(big);
    expect(span.output_truncated).toBe(true);
    expect(span.output_bytes).toBe(Buffer.byteLength(text));
    expect(span.output_sha256).toBe(sha256(text));
    expect(span.output.truncated).toBe(true);
    expect(text.startsWith(span.output.preview)).toBe(true);
    expect(Buffer.byteLength(span.output.preview)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(span.output.preview)).toBeGreaterThan(4090);
    expect(span.output.preview).not.toContain('\uFFFD');
    expect(span).toMatchObject({ input: { small: true }, input_truncated: false });
  });

  it('answers 503 with Retry-After when a recorded payload cannot be read, and still answers without payloads', async () => {
    const { token, organizationId, invocation } = await accepted();
    await startNextAttempt(attemptStore(organizationId), 'k1');
    const spans = spanStore(organizationId, invocation, 1);
    await spans.start({ id: 'inv-1.att-1.1', type: 'model_call', name: 'm', parent_id: null, input: { q: 1 } });
    await s3.send(new DeleteObjectCommand({ Bucket: config.payloadBucket, Key: payloadKey(organizationId, 'k1', 'inv-1.att-1.1', 'input') }));

    const broken = await trace(token, 'k1');
    const bare = await trace(token, 'k1', { payloads: 'false' });

    expect(broken.status).toBe(503);
    expect(broken.body.message).toMatch(/could not be read/);
    expect(Number(broken.headers['retry-after'])).toBeGreaterThan(0);
    expect(bare.status).toBe(200);
    expect(bare.body.spans).toHaveLength(1);
  });
});

describe('GET /traces/{invocation_key} after the retention window', () => {
  it('keeps the summary and failure but answers no spans, attempts or cursor, even before the cloud deletes them', async () => {
    const { token, organizationId } = await newOrganization();
    // Accepted 91 days ago (the window is 90): its span items carry a TTL the table has not acted on yet.
    const startedAt = new Date(Date.now() - 91 * 86_400_000).toISOString();
    const invocation: Invocation = {
      invocation_key: 'old', session_id: 'old-session', session_position: 1, status: 'RUNNING', agent_name: 'a', agent_revision: 'r',
      body_sha256: sha256('{}'), started_at: startedAt, user_cursor: 1,
    };
    expect(await acceptInvocation({ organizationId, invocation, userPrompt: 'long ago', quota: 1000, seen: undefined })).toBeUndefined();
    await startNextAttempt(attemptStore(organizationId), 'old');
    await seedSpans(organizationId, { ...invocation, started_at: new Date().toISOString() }, { attempt: 1, count: 3 });
    await finishInvocation(attemptStore(organizationId), 'old', { Error: 'Runtime.ExitError' });
    expect((await getInvocation(organizationId, 'old'))?.status).toBe('FAILED');

    const { status, body } = await trace(token, 'old');

    expect(status).toBe(200);
    expect(body).toEqual({
      invocation_key: 'old',
      session_id: 'old-session',
      agent_name: 'a',
      agent_revision: 'r',
      status: 'FAILED',
      spans_expired: true,
      started_at: startedAt,
      ended_at: expect.any(String),
      session_position: 1,
      spans: [],
      failure: { kind: 'crash', message: expect.any(String) },
      usage: { input_tokens: 0, output_tokens: 0 },
    });
  });
});

describe('GET /traces/{invocation_key} isolation and deletion', () => {
  it('answers 404 for an unknown key and for another organization key', async () => {
    const { token } = await accepted('mine');
    const stranger = await newOrganization();

    expect((await trace(token, 'nope')).status).toBe(404);
    expect((await trace(stranger.token, 'mine')).status).toBe(404);
  });

  it('is gone with its session', async () => {
    const { token, organizationId, invocation } = await accepted('doomed', 'doomed-session');
    await startNextAttempt(attemptStore(organizationId), 'doomed');
    await seedSpans(organizationId, invocation, { attempt: 1, count: 2 });
    await finishInvocation(attemptStore(organizationId), 'doomed', { Error: 'x' });
    expect((await trace(token, 'doomed')).body.spans).toHaveLength(2);

    expect((await request('DELETE', '/sessions/doomed-session', { token })).status).toBe(204);

    expect((await trace(token, 'doomed')).status).toBe(404);
    expect((await request('GET', '/traces?session_id=doomed-session', { token })).status).toBe(404);
    expect((await request('GET', '/traces', { token })).body.traces).toEqual([]);
  });
});
