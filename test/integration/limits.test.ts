import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import { answer, delay, startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { request } from './support';

// A service of its own with a tiny quota and a 1 s wait slice, as an operator would set
// them (on AWS the slice is 25 s, below API Gateway's ~29 s).
let dir: string;
let model: FakeOpenAIServer;
let cloud: CloudProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-sessions-limits-'));
  model = await startFakeOpenAI();
  cloud = await startCloudProcess({
    port: 0,
    dataDir: null,
    env: { FOUNDER_EMAILS: 'dev@localhost', INVOCATION_QUOTA: '2', WAIT_SLICE_SECONDS: '1' },
    logFile: join(dir, 'service.log'),
  });
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, init: { token?: string; body?: unknown; key?: string } = {}) =>
  request(method, path, { base: cloud.baseUrl, token: init.token, body: init.body, headers: init.key ? { 'idempotency-key': init.key } : {} });

const signIn = async (email: string): Promise<string> => (await call('POST', '/local/sign-in', { body: { email } })).body.token;
const runBody = () => ({ user_prompt: 'Hi', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai', url: model.url } } } });

describe('limits of POST /sessions/{id}', () => {
  it('serves a long wait in slices: 504 when the slice ends, then a re-attach answers', async () => {
    const token = await signIn('dev@localhost');
    model.enqueue(delay(2500, answer('Sliced')));

    // 60 s are asked for; a 504 before the run ended can only be the 1 s slice.
    const first = await call('POST', '/sessions/sliced?wait_timeout_seconds=60', { token, body: runBody(), key: 'slice' });
    let attached = first;
    for (let i = 0; i < 10 && attached.status === 504; i++) {
      attached = await call('POST', '/sessions/sliced?wait_timeout_seconds=60', { token, body: runBody(), key: 'slice' });
    }

    expect(first.status).toBe(504);
    expect(first.body).toEqual({ message: expect.any(String), invocation_key: 'slice' });
    expect(attached.status).toBe(200);
    expect(attached.body.message.content).toBe('Sliced');
  });

  it('answers 429 once the organization has used its quota, and runs nothing', async () => {
    const token = await signIn('dev@localhost');
    // The slicing test above used one of the two invocations.
    expect((await call('POST', '/sessions/second', { token, body: runBody(), key: 'second' })).status).toBe(200);
    const before = model.requests.length;

    const refused = await call('POST', '/sessions/third', { token, body: runBody(), key: 'third' });

    expect(refused.status).toBe(429);
    expect(refused.body.message).toContain('quota');
    expect(refused.headers['idempotency-key']).toBe('third');
    expect(model.requests.length).toBe(before);
    expect((await call('GET', '/sessions/third', { token })).status).toBe(404);
  });

  it('answers 403 not_provisioned to a signed-in user outside the beta', async () => {
    const token = await signIn('outsider@example.com');

    const res = await call('POST', '/sessions/nope', { token, body: runBody() });

    expect(res.status).toBe(403);
    expect(res.body.code).toBe('not_provisioned');
  });
});
