import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import { answer, hang, startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { request } from './support';

// A service of its own on a data dir of its own: killed mid-run like a crashed machine,
// then started again on the same data.
let dir: string;
let model: FakeOpenAIServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-sessions-restart-'));
  model = await startFakeOpenAI();
});

afterAll(async () => {
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

function start(): Promise<CloudProcess> {
  return startCloudProcess({
    port: 0,
    dataDir: join(dir, 'data'),
    env: { FOUNDER_EMAILS: 'dev@localhost', ATTEMPT_TIMEOUT_SECONDS: '60' },
    logFile: join(dir, 'service.log'),
  });
}

const call = (cloud: CloudProcess, method: string, path: string, init: { token?: string; body?: string; key?: string } = {}) =>
  request(method, path, { base: cloud.baseUrl, token: init.token, rawBody: init.body, headers: init.key ? { 'idempotency-key': init.key } : {} });

async function signIn(cloud: CloudProcess): Promise<string> {
  return (await call(cloud, 'POST', '/local/sign-in', { body: JSON.stringify({ email: 'dev@localhost' }) })).body.token;
}

/** Whether any process still has the data dir open on its command line (the JVM holds its files). */
async function anyProcessUsing(path: string): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    if ((await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes(path)) return true;
  }
  return false;
}

describe('a restart of the local service mid-run', () => {
  it('leaves no invocation running and no session locked: the run continues', async () => {
    let cloud = await start();
    const body = JSON.stringify({ user_prompt: 'Survive a crash', agent_name: 'a', agent: { model: { name: 'm', provider: { name: 'openai', url: model.url } } } });
    model.enqueue(hang());
    const before = await signIn(cloud);
    const accepted = await call(cloud, 'POST', '/sessions/crashy?wait_timeout_seconds=0', { token: before, body, key: 'crash-key' });
    expect(accepted.status).toBe(202);
    for (let i = 0; i < 200 && model.requests.length === 0; i++) await sleep(50);
    expect(model.requests).toHaveLength(1);
    // A follower, one event a page, up to the model call that hangs.
    const followed: { seq: number; type: string }[] = [];
    let after: string | undefined;
    const nextPage = async (server: CloudProcess, token: string) => {
      const page = await call(server, 'GET', `/traces/crash-key/events?limit=1&wait_seconds=2${after ? `&after=${encodeURIComponent(after)}` : ''}`, { token });
      expect(page.status).toBe(200);
      followed.push(...page.body.events);
      after = page.body.next_cursor;
    };
    while (!followed.some((event) => event.type === 'span_started')) await nextPage(cloud, before);

    await cloud.crash();
    for (let i = 0; i < 300 && (await anyProcessUsing(join(dir, 'data'))); i++) await sleep(100);
    model.enqueue(answer('Back again'));
    cloud = await start();
    try {
      const token = await signIn(cloud);
      const attached = await call(cloud, 'POST', '/sessions/crashy?wait_timeout_seconds=60', { token, body, key: 'crash-key' });

      expect(attached.status).toBe(200);
      expect(attached.body.message.content).toBe('Back again');
      expect(attached.body.session).toMatchObject({ state: 'IDLE', invocation_count: 1 });
      expect(model.requests).toHaveLength(2);
      // The follower's cursor outlives the restart: it sees what one read after the end returns.
      while (after) await nextPage(cloud, token);
      const whole = await call(cloud, 'GET', '/traces/crash-key/events?limit=500', { token });
      expect(followed).toEqual(whole.body.events);
      expect(followed.map((event) => event.type)).toEqual([
        'attempt_started', 'span_started', 'span_ended', 'attempt_ended',
        'attempt_started', 'span_started', 'span_ended', 'attempt_ended', 'invocation_ended',
      ]);
    } finally {
      await cloud.stop();
    }
  }, 120_000);
});
