/**
 * Webhooks end to end (CONTRACT.md, "Sending what happened where users already look"):
 * every status of /webhooks, and delivery by the Standard Webhooks specification through
 * the delivery state machine: verified with the `standardwebhooks` verifier, retried with
 * the same `webhook-id` until a 2xx, logged, started by every path that records an
 * outcome (the run itself, a failure, a cancel), stopped by a delete.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { answer, delay, startFakeOpenAI, status, type FakeOpenAIServer } from '../fakes/openai-server';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../fakes/webhook-receiver';
import { newOrganization, request } from './support';

let model: FakeOpenAIServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [model, receiver] = await Promise.all([startFakeOpenAI(), startWebhookReceiver()]);
});

afterAll(async () => {
  await Promise.all([model?.close(), receiver?.close()]);
});

const CANARY = `sk-webhook-canary-${Date.now().toString(36)}-0f3a`;

const agent = (credential?: string) => ({
  model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, ...(credential ? { credential } : {}) } },
  max_steps: 5,
});

const run = (token: string, sessionId: string, key: string, options: { wait?: number; credential?: string } = {}) =>
  request('POST', `/sessions/${sessionId}?wait_timeout_seconds=${options.wait ?? 30}`, {
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: `prompt of ${key}`, agent_name: 'hooked', agent: agent(options.credential) },
  });

const forKey = (key: string) => (hook: ReceivedWebhook) => JSON.parse(hook.body).data?.invocation_key === key;

describe('/webhooks', () => {
  it('creates, lists, reads and deletes, showing the secret only at creation', async () => {
    const { token } = await newOrganization();
    const created = await request('POST', '/webhooks', { token, body: { url: receiver.url } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      url: receiver.url,
      events: ['invocation.succeeded', 'invocation.failed'],
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(created.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const { secret, ...shown } = created.body;

    const listed = await request('GET', '/webhooks', { token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ webhooks: [shown] });
    const read = await request('GET', `/webhooks/${shown.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(shown);
    expect(JSON.stringify([listed.body, read.body])).not.toContain(secret);

    expect((await request('DELETE', `/webhooks/${shown.id}`, { token })).status).toBe(204);
    expect((await request('GET', `/webhooks/${shown.id}`, { token })).status).toBe(404);
    expect((await request('DELETE', `/webhooks/${shown.id}`, { token })).status).toBe(404);
    expect((await request('GET', `/webhooks/${shown.id}/deliveries`, { token })).status).toBe(404);
    expect((await request('GET', '/webhooks', { token })).body).toEqual({ webhooks: [] });
  });

  it('lets API keys manage them, and hides one organization\'s from another', async () => {
    const owner = await newOrganization();
    const other = await newOrganization();
    const key = (await request('POST', '/tokens', { token: owner.token, body: { name: 'hooks' } })).body.key as string;
    const created = await request('POST', '/webhooks', { token: key, body: { url: receiver.url, events: ['invocation.failed'] } });
    expect(created.status).toBe(201);
    expect(created.body.events).toEqual(['invocation.failed']);
    const { id } = created.body;
    for (const [method, path] of [['GET', `/webhooks/${id}`], ['GET', `/webhooks/${id}/deliveries`], ['DELETE', `/webhooks/${id}`]] as const) {
      expect((await request(method, path, { token: other.token })).status).toBe(404);
    }
    expect((await request('GET', '/webhooks', { token: other.token })).body).toEqual({ webhooks: [] });
    expect((await request('GET', '/webhooks')).status).toBe(401);
    expect((await request('DELETE', `/webhooks/${id}`, { token: key })).status).toBe(204);
  });

  it.each([
    ['an http URL to a public host', { url: 'http://example.com/hook' }],
    ['a non-http scheme', { url: 'ftp://127.0.0.1/hook' }],
    ['no URL at all', { url: 'not a url' }],
    ['the metadata service', { url: 'https://169.254.169.254/latest/meta-data' }],
    ['any link-local address', { url: 'https://169.254.10.20/hook' }],
    ['the IPv6 metadata address', { url: 'https://[fd00:ec2::254]/hook' }],
    ['a link-local address written as IPv6', { url: 'https://[::ffff:169.254.169.254]/hook' }],
    ['an IPv6 link-local address', { url: 'https://[fe80::1]/hook' }],
    ['an empty events list', { url: 'https://hooks.example.com/x', events: [] }],
    ['an unknown event type', { url: 'https://hooks.example.com/x', events: ['invocation.started'] }],
    ['a repeated event type', { url: 'https://hooks.example.com/x', events: ['invocation.failed', 'invocation.failed'] }],
    ['an unknown field', { url: 'https://hooks.example.com/x', secret: 'mine' }],
    ['a missing url', { events: ['invocation.failed'] }],
  ])('refuses %s with 400 and creates nothing', async (_, body) => {
    const { token } = await newOrganization();
    const refused = await request('POST', '/webhooks', { token, body });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual(expect.any(String));
    expect((await request('GET', '/webhooks', { token })).body).toEqual({ webhooks: [] });
  });

  it('allows at most 10 per organization, and another after a delete', async () => {
    const { token } = await newOrganization();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await request('POST', '/webhooks', { token, body: { url: `${receiver.url}?n=${i}` } });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    const eleventh = await request('POST', '/webhooks', { token, body: { url: receiver.url } });
    expect(eleventh.status).toBe(400);
    expect(eleventh.body.message).toMatch(/at most 10/);
    expect((await request('GET', '/webhooks', { token })).body.webhooks.map((w: { id: string }) => w.id)).toEqual(ids);
    expect((await request('DELETE', `/webhooks/${ids[0]}`, { token })).status).toBe(204);
    expect((await request('POST', '/webhooks', { token, body: { url: receiver.url } })).status).toBe(201);
  });

  it('refuses a bad deliveries query with 400', async () => {
    const { token } = await newOrganization();
    const { id } = (await request('POST', '/webhooks', { token, body: { url: receiver.url } })).body;
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'after=forged']) {
      expect((await request('GET', `/webhooks/${id}/deliveries?${query}`, { token })).status).toBe(400);
    }
    expect((await request('GET', `/webhooks/${id}/deliveries`, { token })).body).toEqual({ deliveries: [] });
  });
});

describe('delivery', () => {
  it('retries a receiver that answers 500 twice, then delivers the same signed event with the same webhook-id', async () => {
    const { token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'MODEL_KEY', value: CANARY } });
    const created = await request('POST', '/webhooks', { token, body: { url: receiver.url } });
    const verifier = new Webhook(created.body.secret);
    receiver.script(500, 500);
    model.enqueue(answer('delivered answer'));

    const ran = await run(token, 'hooks-1', 'hook-retry', { credential: '{{secret:MODEL_KEY}}' });
    expect(ran.status).toBe(200);
    const tries = await receiver.waitFor(3, { filter: forKey('hook-retry') });

    expect(tries.map((hook) => hook.status)).toEqual([500, 500, 200]);
    expect(new Set(tries.map((hook) => hook.headers['webhook-id'])).size).toBe(1);
    for (const hook of tries) {
      // Throws unless the signature is the secret's over `<id>.<timestamp>.<body>`, within the tolerance.
      verifier.verify(hook.body, {
        'webhook-id': hook.headers['webhook-id'] as string,
        'webhook-timestamp': hook.headers['webhook-timestamp'] as string,
        'webhook-signature': hook.headers['webhook-signature'] as string,
      });
      expect(hook.headers['content-type']).toBe('application/json');
      expect(hook.body).not.toContain(CANARY);
    }
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(tries[2]!.body, tries[2]!.headers as Record<string, string>)).toThrow();
    // Backoff: the retries wait, the second longer than the first.
    expect(tries[1]!.receivedAt - tries[0]!.receivedAt).toBeGreaterThanOrEqual(900);
    expect(tries[2]!.receivedAt - tries[1]!.receivedAt).toBeGreaterThanOrEqual(1900);

    const event = JSON.parse(tries[2]!.body);
    const trace = await request('GET', '/traces/hook-retry?payloads=false', { token });
    const { spans: _spans, attempts: _attempts, session_position: _position, next_cursor: _cursor, ...summary } = trace.body;
    expect(event).toEqual({ type: 'invocation.succeeded', timestamp: trace.body.ended_at, data: summary });
    expect(event.data).toMatchObject({ invocation_key: 'hook-retry', session_id: 'hooks-1', agent_name: 'hooked', status: 'SUCCEEDED', usage: { input_tokens: 12, output_tokens: 3 } });

    // The log: every try, newest first, one per page with cursors.
    const log = await request('GET', `/webhooks/${created.body.id}/deliveries`, { token });
    expect(log.status).toBe(200);
    const eventId = tries[0]!.headers['webhook-id'];
    expect(log.body.deliveries).toEqual([3, 2, 1].map((attempt) => ({
      event_id: eventId,
      invocation_key: 'hook-retry',
      type: 'invocation.succeeded',
      attempt,
      status_code: attempt === 3 ? 200 : 500,
      time: expect.any(String),
    })));
    expect(log.body.next_cursor).toBeUndefined();
    const pages: number[] = [];
    let after: string | undefined;
    do {
      const page = await request('GET', `/webhooks/${created.body.id}/deliveries?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`, { token });
      expect(page.status).toBe(200);
      pages.push(...page.body.deliveries.map((d: { attempt: number }) => d.attempt));
      after = page.body.next_cursor;
    } while (after);
    expect(pages).toEqual([3, 2, 1]);
  });

  it('delivers a failure, with the failure, to the webhooks subscribed to failures only', async () => {
    const { token } = await newOrganization();
    const failures = await request('POST', '/webhooks', { token, body: { url: `${receiver.url}?only=failed`, events: ['invocation.failed'] } });
    const successes = await request('POST', '/webhooks', { token, body: { url: `${receiver.url}?only=succeeded`, events: ['invocation.succeeded'] } });
    model.enqueue(status(400, { error: { message: 'model not found', type: 'invalid_request_error' } }));

    const ran = await run(token, 'hooks-2', 'hook-failed');
    expect(ran.status).toBe(502);
    const [hook] = await receiver.waitFor(1, { filter: forKey('hook-failed') });

    const event = JSON.parse(hook!.body);
    expect(event.type).toBe('invocation.failed');
    expect(event.data).toMatchObject({ invocation_key: 'hook-failed', status: 'FAILED', failure: { kind: ran.body.kind } });
    new Webhook(failures.body.secret).verify(hook!.body, hook!.headers as Record<string, string>);
    await sleep(1500);
    expect(receiver.received.filter(forKey('hook-failed'))).toHaveLength(1);
    expect((await request('GET', `/webhooks/${successes.body.id}/deliveries`, { token })).body.deliveries).toEqual([]);
  });

  it('delivers a cancelled invocation', async () => {
    const { token } = await newOrganization();
    await request('POST', '/webhooks', { token, body: { url: receiver.url } });
    model.enqueue(delay(3000, answer('too late')));
    expect((await run(token, 'hooks-3', 'hook-cancel', { wait: 0 })).status).toBe(202);
    await sleep(300);

    const cancelled = await request('POST', '/traces/hook-cancel/cancel', { token });
    expect(cancelled.status).toBe(200);
    const [hook] = await receiver.waitFor(1, { filter: forKey('hook-cancel') });

    const event = JSON.parse(hook!.body);
    expect(event.type).toBe('invocation.failed');
    expect(event.data.failure.message).toMatch(/^cancelled/);
    await sleep(3500);
    // The execution's own end (stopped) does not deliver it a second time.
    expect(receiver.received.filter(forKey('hook-cancel'))).toHaveLength(1);
  });

  it('stops retrying once the webhook is deleted', async () => {
    const { token } = await newOrganization();
    const { id } = (await request('POST', '/webhooks', { token, body: { url: `${receiver.url}?status=500` } })).body;
    model.enqueue(answer('never taken'));
    expect((await run(token, 'hooks-4', 'hook-deleted')).status).toBe(200);
    await receiver.waitFor(1, { filter: forKey('hook-deleted') });

    expect((await request('DELETE', `/webhooks/${id}`, { token })).status).toBe(204);
    const before = receiver.received.filter(forKey('hook-deleted')).length;
    // The next tries would come 1, 2 and 4 s after the last.
    await sleep(7500);
    expect(receiver.received.filter(forKey('hook-deleted')).length).toBeLessThanOrEqual(before + 1);
  });

  it('delivers each of eight sessions finishing at once exactly once', async () => {
    const { token } = await newOrganization();
    const { secret } = (await request('POST', '/webhooks', { token, body: { url: `${receiver.url}?burst=1` } })).body;
    const keys = Array.from({ length: 8 }, (_, i) => `hook-burst-${i}`);
    model.enqueue(...keys.map((key) => delay(300, answer(`answer ${key}`))));

    const answers = await Promise.all(keys.map((key, i) => run(token, `burst-${i}`, key)));
    expect(answers.map((answered) => answered.status)).toEqual(keys.map(() => 200));
    const wanted = new Set(keys);
    const hooks = await receiver.waitFor(8, { filter: (hook) => wanted.has(JSON.parse(hook.body).data.invocation_key) });

    expect(new Set(hooks.map((hook) => JSON.parse(hook.body).data.invocation_key))).toEqual(wanted);
    for (const hook of hooks) new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>);
    await sleep(1500);
    expect(receiver.received.filter((hook) => wanted.has(JSON.parse(hook.body).data.invocation_key))).toHaveLength(8);
  });

  it('writes no secret value to the service log', async () => {
    const log = await readFile(inject('serviceLogFile'), 'utf8');
    expect(log).not.toContain(CANARY);
    expect(log).not.toMatch(/whsec_/);
  });
});
