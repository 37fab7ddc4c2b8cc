import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listAttempts } from '#data/attempts';
import { getInvocation } from '#data/invocations';
import { answer, startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// DELETE /sessions/{id} end to end: the session, its records and its objects go, and a
// running invocation is stopped first.
let model: FakeOpenAIServer;
const env = inject('serviceEnv');
const s3 = new S3Client({ endpoint: env.AWS_ENDPOINT_URL_S3, forcePathStyle: true });

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(async () => {
  await model.close();
  s3.destroy();
});

const body = (url: string) => ({ user_prompt: 'Say hello', agent_name: 'deleter', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url } } } });

const run = (token: string, sessionId: string, key: string, options: { url?: string; wait?: number } = {}) =>
  request('POST', `/sessions/${sessionId}${options.wait === undefined ? '' : `?wait_timeout_seconds=${options.wait}`}`, {
    token,
    headers: { 'idempotency-key': key },
    body: body(options.url ?? model.url),
  });

async function objectsOf(organizationId: string, invocationKey: string): Promise<string[]> {
  const keys: string[] = [];
  for (const root of ['payloads', 'checkpoints']) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: env.PAYLOAD_BUCKET, Prefix: `${root}/${organizationId}/${invocationKey}/` }));
    keys.push(...(page.Contents ?? []).map((object) => object.Key!));
  }
  return keys;
}

/** A model endpoint that never answers and notes when the harness drops its connection. */
async function hangingModel(): Promise<{ url: string; requested: () => boolean; dropped: () => boolean; server: Server }> {
  let requested = false;
  let dropped = false;
  const server = createServer((req) => {
    requested = true;
    req.socket.on('close', () => (dropped = true));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requested: () => requested, dropped: () => dropped, server };
}

async function until(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) if (await condition()) return true;
  return condition();
}

describe('DELETE /sessions/{id}', () => {
  it('deletes an idle session with its messages, audit log, invocations and objects', async () => {
    const { token, organizationId } = await newOrganization();
    model.enqueue(answer('One'), answer('Two'));
    await run(token, 'doomed', 'd1');
    await run(token, 'doomed', 'd2');
    expect((await objectsOf(organizationId, 'd1')).length).toBeGreaterThan(0);

    const res = await request('DELETE', '/sessions/doomed', { token });

    expect(res.status).toBe(204);
    expect((await request('GET', '/sessions/doomed', { token })).status).toBe(404);
    expect((await request('GET', '/sessions/doomed/audit', { token })).status).toBe(404);
    expect((await request('GET', '/sessions', { token })).body.sessions).toEqual([]);
    expect(await objectsOf(organizationId, 'd1')).toEqual([]);
    expect(await objectsOf(organizationId, 'd2')).toEqual([]);
    expect(await getInvocation(organizationId, 'd1')).toBeUndefined();
    expect(await listAttempts(organizationId, 'd2')).toEqual([]);
    expect((await request('DELETE', '/sessions/doomed', { token })).status).toBe(404);
  });

  it('lets the same id and keys start a fresh session afterwards', async () => {
    const { token } = await newOrganization();
    model.enqueue(answer('Before'));
    await run(token, 'reborn', 'r1');
    await request('DELETE', '/sessions/reborn', { token });
    model.enqueue(answer('After'));

    const again = await run(token, 'reborn', 'r1');

    expect(again.status).toBe(200);
    expect(again.body.session.invocation_count).toBe(1);
    expect(again.body.message).toMatchObject({ cursor: 2, content: 'After' });
    expect((await request('GET', '/sessions/reborn/audit', { token })).body.events).toHaveLength(3);
  });

  it('stops a running invocation first, and nothing recreates the session', async () => {
    const { token, organizationId } = await newOrganization();
    const hanging = await hangingModel();
    try {
      expect((await run(token, 'busy', 'b1', { url: hanging.url, wait: 0 })).status).toBe(202);
      expect(await until(hanging.requested, 10_000)).toBe(true);

      const res = await request('DELETE', '/sessions/busy', { token });

      expect(res.status).toBe(204);
      // The harness process was killed: its connection to the model closes.
      expect(await until(hanging.dropped, 5_000)).toBe(true);
      await sleep(3_000);
      expect((await request('GET', '/sessions/busy', { token })).status).toBe(404);
      expect((await request('GET', '/sessions/busy/audit', { token })).status).toBe(404);
      expect(await getInvocation(organizationId, 'b1')).toBeUndefined();
      expect(await listAttempts(organizationId, 'b1')).toEqual([]);
      expect(await objectsOf(organizationId, 'b1')).toEqual([]);
    } finally {
      hanging.server.closeAllConnections();
      hanging.server.close();
    }
  });

  it('answers a request waiting on the deleted session with its interruption, or 404 once it is gone', async () => {
    const { token } = await newOrganization();
    const hanging = await hangingModel();
    try {
      const waiting = run(token, 'waited', 'w1', { url: hanging.url, wait: 60 });
      expect(await until(hanging.requested, 10_000)).toBe(true);

      expect((await request('DELETE', '/sessions/waited', { token })).status).toBe(204);

      // It sees the invocation end FAILED interrupted, or (a moment later) nothing left at all.
      const answer = await waiting;
      if (answer.status === 502) expect(answer.body).toEqual({ message: 'the session was deleted', kind: 'interrupted' });
      else expect(answer.status).toBe(404);
      expect(answer.body.message).toContain('deleted');
    } finally {
      hanging.server.closeAllConnections();
      hanging.server.close();
    }
  });

  it('answers 404 for an unknown or foreign session and 401 without credential', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    await run(first.token, 'kept', 'k1');

    expect((await request('DELETE', '/sessions/nope', { token: first.token })).status).toBe(404);
    expect((await request('DELETE', '/sessions/kept', { token: second.token })).status).toBe(404);
    expect((await request('DELETE', '/sessions/kept')).status).toBe(401);
    expect((await request('GET', '/sessions/kept', { token: first.token })).status).toBe(200);
  });
});
