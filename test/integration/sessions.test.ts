import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAttempts } from '#data/attempts';
import { answer, delay, hang, startFakeOpenAI, status, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// The run path end to end: the local gateway, the handlers, the state machine run by the
// local Step Functions endpoint with task handlers in child processes, and a fake
// OpenAI-compatible model over real HTTP.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const agent = () => ({ model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } });
const body = (prompt = 'Say hello', extra: Record<string, unknown> = {}) => ({ user_prompt: prompt, agent_name: 'greeter', agent: agent(), ...extra });

async function run(token: string, sessionId: string, options: { key?: string; wait?: number; rawBody?: string; body?: unknown } = {}) {
  const query = options.wait === undefined ? '' : `?wait_timeout_seconds=${options.wait}`;
  return request('POST', `/sessions/${sessionId}${query}`, {
    token,
    headers: options.key ? { 'idempotency-key': options.key } : {},
    ...(options.rawBody ? { rawBody: options.rawBody } : { body: options.body ?? body() }),
  });
}

describe('POST /sessions/{id}', () => {
  it('runs the agent and answers 200 with the session and the assistant message', async () => {
    const { token } = await newOrganization();
    model.enqueue(answer('Hello there'));

    const res = await run(token, 'greet-1', { key: 'first' });

    expect(res.status).toBe(200);
    expect(res.headers['idempotency-key']).toBe('first');
    expect(res.body.session).toMatchObject({ id: 'greet-1', state: 'IDLE', invocation_count: 1, agent_name: 'greeter' });
    expect(res.body.session.agent_revision).toMatch(/^[0-9a-f]{16}$/);
    expect(res.body.message).toMatchObject({ cursor: 2, role: 'assistant', content: 'Hello there', invocation_key: 'first' });
    const read = await request('GET', '/sessions/greet-1', { token });
    expect(read.status).toBe(200);
    expect(read.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Say hello'],
      ['assistant', 'Hello there'],
    ]);
  });

  it('generates a key when none is sent and returns it', async () => {
    const { token } = await newOrganization();

    const res = await run(token, 'no-key');

    expect(res.status).toBe(200);
    expect(res.headers['idempotency-key']).toMatch(/^inv_/);
  });

  it('re-attaches a retry with the same key and body without running again', async () => {
    const { token } = await newOrganization();
    model.enqueue(answer('Only once'));
    const rawBody = JSON.stringify(body('Once please'));
    const first = await run(token, 'once', { key: 'k', rawBody });
    const before = model.requests.length;

    const again = await run(token, 'once', { key: 'k', rawBody });

    expect(again.status).toBe(200);
    expect(again.body.message).toEqual(first.body.message);
    expect(model.requests.length).toBe(before);
  });

  it('answers 409 for the same key with another body or on another session', async () => {
    const { token } = await newOrganization();
    await run(token, 's409', { key: 'k', rawBody: JSON.stringify(body('one')) });

    const otherBody = await run(token, 's409', { key: 'k', rawBody: JSON.stringify(body('two')) });
    const otherSession = await run(token, 's409-b', { key: 'k', rawBody: JSON.stringify(body('one')) });

    expect(otherBody.status).toBe(409);
    expect(otherBody.headers['idempotency-key']).toBe('k');
    expect(otherSession.status).toBe(409);
  });

  it('answers 202 for wait 0, 423 for a new key while it runs, and re-attaches with its key', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(1500, answer('Slow answer')));
    const rawBody = JSON.stringify(body('Take your time'));

    const accepted = await run(token, 'busy', { key: 'slow', rawBody, wait: 0 });
    const locked = await run(token, 'busy', { key: 'other', wait: 0 });
    const attached = await run(token, 'busy', { key: 'slow', rawBody });

    expect(accepted.status).toBe(202);
    expect(accepted.body.session).toMatchObject({ state: 'RUNNING', current_invocation_key: 'slow' });
    expect(accepted.body.message).toBeUndefined();
    expect(locked.status).toBe(423);
    expect(attached.status).toBe(200);
    expect(attached.body.message.content).toBe('Slow answer');
  });

  it('answers 504 when the wait ends first, and the run completes for a later re-attach', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(2500, answer('Worth the wait')));
    const rawBody = JSON.stringify(body('Slowly'));

    const timedOut = await run(token, 'wait', { key: 'w', rawBody, wait: 1 });
    const attached = await run(token, 'wait', { key: 'w', rawBody, wait: 30 });

    expect(timedOut.status).toBe(504);
    expect(timedOut.body).toEqual({ message: expect.any(String), invocation_key: 'w' });
    expect(attached.status).toBe(200);
    expect(attached.body.message.content).toBe('Worth the wait');
  });

  it('answers 502 with kind for a failed run, and replays it for the same key', async () => {
    const { token } = await newOrganization();
    model.enqueue(status(401, { error: { message: 'bad key' } }));
    const rawBody = JSON.stringify(body('Will fail'));

    const failed = await run(token, 'fail', { key: 'f', rawBody });
    const replay = await run(token, 'fail', { key: 'f', rawBody });

    expect(failed.status).toBe(502);
    expect(failed.body).toEqual({ message: expect.stringContaining('401'), kind: 'interrupted' });
    expect(replay.status).toBe(502);
    expect(replay.body).toEqual(failed.body);
    expect((await request('GET', '/sessions/fail', { token })).body.session.state).toBe('IDLE');
  });

  it('retries an attempt whose model failed, and answers from the second attempt', async () => {
    const { token, organizationId } = await newOrganization();
    // The SDK's own retries (3 tries) all fail, so the first attempt fails; the second answers.
    model.enqueue(status(500), status(500), status(500), answer('Second time lucky'));

    const res = await run(token, 'retry', { key: 'r' });

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Second time lucky');
    expect((await listAttempts(organizationId, 'r')).map((a) => [a.status, a.failure?.kind])).toEqual([
      ['FAILED', 'interrupted'],
      ['SUCCEEDED', undefined],
    ]);
  });

  it('kills an attempt whose model hangs past ATTEMPT_TIMEOUT_SECONDS and tries again', async () => {
    const { token, organizationId } = await newOrganization();
    model.enqueue(hang(), answer('Awake now'));

    const res = await run(token, 'hang', { key: 'h' });

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Awake now');
    expect((await listAttempts(organizationId, 'h')).map((a) => [a.status, a.failure?.kind])).toEqual([
      ['FAILED', 'no_progress'],
      ['SUCCEEDED', undefined],
    ]);
  });

  it('turns 20 simultaneous identical requests into one invocation and one model run', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(300, answer('Once for everyone')));
    const before = model.requests.length;
    const rawBody = JSON.stringify(body('Everyone at once'));

    const answers = await Promise.all(Array.from({ length: 20 }, () => run(token, 'crowd', { key: 'same', rawBody })));

    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.body.message.content))).toEqual(new Set(['Once for everyone']));
    expect(model.requests.length - before).toBe(1);
  });

  it('runs exactly one of 20 simultaneous keys on one session; the others get 423', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(300, answer('The one that ran')));
    const before = model.requests.length;

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => run(token, 'contended', { key: `key-${i}` })));

    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, ...Array(19).fill(423)]);
    expect(model.requests.length - before).toBe(1);
  });

  it.each([
    ['a wait above 1800', { wait: 1801 }, 'wait_timeout_seconds'],
    ['a bad session id', { session: 'x' }, 'id'],
    ['a missing model', { body: { user_prompt: 'p', agent_name: 'a', agent: {} } }, 'model'],
    ['an unknown tool', { body: { user_prompt: 'p', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai' } }, tools: { browser: {} } } } }, 'browser'],
    ['a malformed MCP server', { body: { user_prompt: 'p', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai' } }, mcp_servers: [{ name: 'x' }] } } }, 'url'],
    ['a literal credential', { body: { user_prompt: 'p', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai', credential: 'sk-123' } } } } }, 'secret reference'],
    ['a malformed secret reference', { body: { user_prompt: 'p', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai', credential: '{{secret:no good}}' } } } } }, 'secret reference'],
    ['an unknown secret', { body: { user_prompt: 'p', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai', credential: '{{secret:NOPE}}' } } } } }, 'NOPE'],
    ['a missing user_prompt', { body: { agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai' } } } } }, 'user_prompt'],
    ['an Idempotency-Key over 255 characters', { key: 'k'.repeat(256) }, 'idempotency-key'],
  ])('answers 400 for %s, before anything runs', async (_case, options: { wait?: number; session?: string; body?: unknown; key?: string }, hint) => {
    const { token } = await newOrganization();

    const res = await run(token, options.session ?? 'bad-input', { wait: options.wait, body: options.body, key: options.key });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain(hint);
    expect((await request('GET', '/sessions/bad-input', { token })).status).toBe(404);
  });

  it('answers 401 without a credential', async () => {
    expect((await request('POST', '/sessions/anon', { body: body() })).status).toBe(401);
  });
});

describe('GET /sessions/{id}', () => {
  it('pages messages by cursor with next_cursor', async () => {
    const { token } = await newOrganization();
    for (let i = 1; i <= 3; i++) await run(token, 'paged', { key: `p${i}`, body: body(`prompt ${i}`) });

    const first = await request('GET', '/sessions/paged?limit=4', { token });
    const rest = await request('GET', `/sessions/paged?limit=4&after=${first.body.next_cursor}`, { token });

    expect(first.body.messages.map((m: { cursor: number }) => m.cursor)).toEqual([1, 2, 3, 4]);
    expect(first.body.next_cursor).toBe('4');
    expect(rest.body.messages.map((m: { cursor: number }) => m.cursor)).toEqual([5, 6]);
    expect(rest.body.next_cursor).toBeUndefined();
  });

  it('answers 400 for a bad cursor or limit, 404 for an unknown or foreign session, 401 without credential', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    await run(first.token, 'mine', { key: 'm' });

    expect((await request('GET', '/sessions/mine?after=abc', { token: first.token })).status).toBe(400);
    expect((await request('GET', '/sessions/mine?limit=1001', { token: first.token })).status).toBe(400);
    expect((await request('GET', '/sessions/nope', { token: first.token })).status).toBe(404);
    expect((await request('GET', '/sessions/mine', { token: second.token })).status).toBe(404);
    expect((await request('GET', '/sessions/mine')).status).toBe(401);
  });
});
