/**
 * Every allowed ATTEMPT_TIMEOUT_SECONDS works (CONTRACT.md): at the shortest settings an
 * attempt that makes progress runs to the end however long it takes in all, and one that
 * goes silent is killed as no_progress, on every attempt. Each setting gets a service of its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import { answer, delay, hang, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { request } from './support';

const MAX_ATTEMPTS = 2;

describe.each([1, 2])('with ATTEMPT_TIMEOUT_SECONDS=%i', (timeoutSeconds) => {
  let dir: string;
  let cloud: CloudProcess;
  let model: FakeOpenAIServer;
  let token: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-timeouts-'));
    model = await startFakeOpenAI();
    cloud = await startCloudProcess({
      port: 0,
      dataDir: null,
      env: { FOUNDER_EMAILS: 'dev@localhost', ATTEMPT_TIMEOUT_SECONDS: String(timeoutSeconds), MAX_ATTEMPTS: String(MAX_ATTEMPTS) },
      logFile: join(dir, 'service.log'),
    });
    token = (await request('POST', '/local/sign-in', { base: cloud.baseUrl, body: { email: 'dev@localhost' } })).body.token;
  }, 60_000);

  afterAll(async () => {
    await cloud?.stop();
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string) => request('GET', path, { base: cloud.baseUrl, token });
  const run = (session: string, key: string, wait = 60) =>
    request('POST', `/sessions/${session}?wait_timeout_seconds=${wait}`, {
      base: cloud.baseUrl,
      token,
      headers: { 'idempotency-key': key },
      body: { user_prompt: 'Go', agent_name: 'timed', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } } },
    });

  it('runs a model that answers in 0.5 s to the end', async () => {
    model.enqueue(delay(500, answer('in time')));

    const res = await run(`quick-${timeoutSeconds}`, `quick-${timeoutSeconds}`);

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('in time');
  });

  it('runs five steps of 0.8 s each to the end, longer in all than the timeout', async () => {
    model.enqueue(...Array.from({ length: 4 }, () => delay(800, toolCall('lookup'))), delay(800, answer('five steps')));

    const res = await run(`steps-${timeoutSeconds}`, `steps-${timeoutSeconds}`);

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('five steps');
    const trace = await get(`/traces/steps-${timeoutSeconds}`);
    expect(trace.body.attempts).toEqual([expect.objectContaining({ number: 1, status: 'SUCCEEDED' })]);
    expect(trace.body.spans.filter((span: { type: string }) => span.type === 'model_call')).toHaveLength(5);
  });

  it('kills a model that hangs as no_progress on every attempt, while the service answers', async () => {
    model.enqueue(...Array.from({ length: MAX_ATTEMPTS }, () => hang()));
    const key = `hang-${timeoutSeconds}`;

    const accepted = await run(key, key, 0);
    expect(accepted.status).toBe(202);
    // The hang holds a sandbox, never the gateway: health answers while the run is stuck.
    const health = await request('GET', '/health', { base: cloud.baseUrl });
    const during = await get(`/traces/${key}`);
    const res = await run(key, key);

    expect(health.status).toBe(200);
    expect(during.body.status).toBe('RUNNING');
    expect(res.status).toBe(502);
    expect(res.body.kind).toBe('no_progress');
    const trace = await get(`/traces/${key}`);
    expect(trace.body).toMatchObject({ status: 'FAILED', failure: { kind: 'no_progress' } });
    expect(trace.body.attempts).toHaveLength(MAX_ATTEMPTS);
    for (const attempt of trace.body.attempts) expect(attempt).toMatchObject({ status: 'FAILED', failure: { kind: 'no_progress' } });
    expect((await get(`/sessions/${key}`)).body.session.state).toBe('IDLE');
  });
});
