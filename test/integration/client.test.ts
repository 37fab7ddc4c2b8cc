import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import {
  AgentSessions,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GatewayTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  QuotaExceededError,
  RunFailedError,
  SessionLockedError,
  type AgentConfig,
  type WebhookDelivery,
} from '../../client/index';
import { answer, delay, hang, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { baseUrl, newOrganization, signIn, uniqueEmail } from './support';

// The typed client against the local service: no mock of the service anywhere.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const agent = (extra: Partial<AgentConfig> = {}): AgentConfig => ({ model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, ...extra });

async function organizationClient(): Promise<AgentSessions> {
  const { token } = await newOrganization();
  return new AgentSessions({ baseUrl: baseUrl(), token });
}

interface Sent {
  method: string;
  url: URL;
  key: string | null;
  body: string | undefined;
  status: number;
}

/** A fetch that passes everything through to the service and records what went and came back. */
function recordingFetch(sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    sent.push({ method: init?.method ?? 'GET', url: new URL(String(input)), key: headers.get('idempotency-key'), body: init?.body as string | undefined, status: response.status });
    return response;
  };
}

describe('the client: runs', () => {
  it('runs a session, makes a key when given none, and re-attaches with the same key and body', async () => {
    const sent: Sent[] = [];
    const client = new AgentSessions({ baseUrl: baseUrl(), token: (await newOrganization()).token, fetch: recordingFetch(sent) });
    model.enqueue(answer('Hello from the fake'));

    const first = await client.sessions.run('client-run', { user_prompt: 'Hi', agent_name: 'greeter', agent: agent() });
    const again = await client.sessions.run('client-run', { user_prompt: 'Hi', agent_name: 'greeter', agent: agent(), idempotency_key: first.invocation_key });

    expect(first.message?.content).toBe('Hello from the fake');
    expect(first.session).toMatchObject({ id: 'client-run', state: 'IDLE', invocation_count: 1 });
    expect(first.invocation_key).toBe(sent[0]!.key);
    expect(first.invocation_key).toMatch(/^[0-9a-f-]{36}$/);
    expect(again.message).toEqual(first.message);
    expect(again.session.invocation_count).toBe(1);
  });

  it('answers 202 without a message for a wait of 0, then 423 to a new key, and 409 to the same key with another body', async () => {
    const client = await organizationClient();
    model.enqueue(delay(3000, answer('Late')));

    const accepted = await client.sessions.run('busy', { user_prompt: 'Slow', agent_name: 'a', agent: agent(), idempotency_key: 'slow-1', wait_timeout_seconds: 0 });
    const locked = await client.sessions.run('busy', { user_prompt: 'Other', agent_name: 'a', agent: agent(), idempotency_key: 'slow-2', wait_timeout_seconds: 0 }).catch((e: unknown) => e);
    const conflict = await client.sessions.run('busy', { user_prompt: 'Changed', agent_name: 'a', agent: agent(), idempotency_key: 'slow-1', wait_timeout_seconds: 0 }).catch((e: unknown) => e);
    const finished = await client.sessions.run('busy', { user_prompt: 'Slow', agent_name: 'a', agent: agent(), idempotency_key: 'slow-1', wait_timeout_seconds: 30 });

    expect(accepted.message).toBeUndefined();
    expect(accepted.invocation_key).toBe('slow-1');
    expect(locked).toBeInstanceOf(SessionLockedError);
    expect((locked as SessionLockedError).status).toBe(423);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(finished.message?.content).toBe('Late');
  });

  it('throws RunFailedError with the kind for a failed run, and never retries it', async () => {
    const sent: Sent[] = [];
    const client = new AgentSessions({ baseUrl: baseUrl(), token: (await newOrganization()).token, fetch: recordingFetch(sent) });
    model.enqueue(toolCall('lookup', {}));

    const failed = await client.sessions.run('fails', { user_prompt: 'Go', agent_name: 'a', agent: agent({ max_steps: 1 }) }).catch((e: unknown) => e);

    expect(failed).toBeInstanceOf(RunFailedError);
    expect((failed as RunFailedError).kind).toBe('interrupted');
    expect(sent.filter((s) => s.method === 'POST')).toHaveLength(1);
  });
});

describe('the client: errors', () => {
  it('maps each error status to its class', async () => {
    const client = await organizationClient();
    const outsider = new AgentSessions({ baseUrl: baseUrl(), token: await signIn(uniqueEmail('outsider')) });
    const anonymous = new AgentSessions({ baseUrl: baseUrl(), token: 'not-a-token' });

    const missing = await client.sessions.get('no-such-session').catch((e: unknown) => e);
    const badLimit = await client.traces.get('anything', { payloads: true, limit: 100 }).catch((e: unknown) => e);
    const unauthenticated = await anonymous.whoami().catch((e: unknown) => e);
    const notProvisioned = await outsider.whoami().catch((e: unknown) => e);

    expect(missing).toBeInstanceOf(NotFoundError);
    expect(badLimit).toBeInstanceOf(BadRequestError);
    expect((badLimit as BadRequestError).status).toBe(400);
    expect(unauthenticated).toBeInstanceOf(AuthenticationError);
    expect(notProvisioned).toBeInstanceOf(PermissionDeniedError);
    expect((notProvisioned as PermissionDeniedError).code).toBe('not_provisioned');
    expect(await anonymous.health()).toEqual({ status: 'ok' });
  });

  it('refuses ids that no URL path can carry, before sending anything', async () => {
    const client = await organizationClient();

    await expect(client.sessions.delete('..')).rejects.toThrow(/cannot be used as an id/);
  });

  it('percent-encodes ids, so an id with a colon reaches its session', async () => {
    const client = await organizationClient();
    model.enqueue(answer('Colon'));

    await client.sessions.run('team:a.b', { user_prompt: 'Hi', agent_name: 'a', agent: agent() });

    expect((await client.sessions.get('team:a.b')).session.id).toBe('team:a.b');
    await client.sessions.delete('team:a.b');
    await expect(client.sessions.get('team:a.b')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('the client: paginated lists', () => {
  it('iterates every session, message, audit event, trace and span across pages', async () => {
    const client = await organizationClient();
    for (const id of ['p1', 'p2', 'p3']) {
      model.enqueue(answer(`answer of ${id}`));
      await client.sessions.run(id, { user_prompt: `prompt of ${id}`, agent_name: 'pager', agent: agent(), idempotency_key: `key-${id}` });
    }
    for (const n of [2, 3]) {
      model.enqueue(answer(`answer ${n}`));
      await client.sessions.run('p1', { user_prompt: `prompt ${n}`, agent_name: 'pager', agent: agent(), idempotency_key: `key-p1-${n}` });
    }
    model.enqueue(toolCall('lookup', { q: 1 }), toolCall('lookup', { q: 2 }), answer('after tools'));
    await client.sessions.run('tools', { user_prompt: 'Use tools', agent_name: 'pager', agent: agent(), idempotency_key: 'key-tools' });

    const sessions = client.sessions.list({ limit: 2 });
    const sessionPages = [];
    for await (const page of sessions.pages()) sessionPages.push(page);
    const messages = await client.sessions.get('p1', { limit: 2 }).all();
    const events = await client.sessions.audit('p1', { limit: 3 }).all();
    const traces = await client.traces.list({ limit: 2 }).all();
    const spans = await client.traces.get('key-tools', { limit: 1 }).all();
    const onePage = await client.traces.get('key-tools', { payloads: false });

    expect(sessionPages.length).toBeGreaterThan(1);
    expect(sessionPages.flatMap((page) => page.sessions.map((s) => s.id)).sort()).toEqual(['p1', 'p2', 'p3', 'tools']);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'prompt of p1'],
      ['assistant', 'answer of p1'],
      ['user', 'prompt 2'],
      ['assistant', 'answer 2'],
      ['user', 'prompt 3'],
      ['assistant', 'answer 3'],
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.filter((e) => e.type === 'agent_invocation')).toHaveLength(3);
    expect(traces.map((t) => t.invocation_key)).toEqual(['key-tools', 'key-p1-3', 'key-p1-2', 'key-p3', 'key-p2', 'key-p1']);
    expect(spans.map((s) => s.id)).toEqual(onePage.spans.map((s) => s.id));
    expect(spans.map((s) => s.type)).toEqual(['model_call', 'tool_call', 'model_call', 'tool_call', 'model_call']);
    expect(spans[0]).toHaveProperty('input');
    expect(onePage.spans[0]).not.toHaveProperty('input');
  });

  it('iterates the memories of a group across pages and deletes them', async () => {
    const client = await organizationClient();
    const memoryAgent = agent({ memory: { group: 'team', generation: ['agent'] } });
    model.enqueue(
      toolCall('memory_write', { content: 'fact one' }),
      toolCall('memory_write', { content: 'fact two' }),
      toolCall('memory_write', { content: 'fact three' }),
      answer('Noted.'),
    );
    await client.sessions.run('remember', { user_prompt: 'Remember', agent_name: 'memo', agent: memoryAgent });

    const memories = await client.memories.list({ group: 'team', limit: 2 }).all();
    await client.memories.delete(memories[0]!.id, { group: 'team' });
    const afterOne = await client.memories.list({ group: 'team' });
    await client.memories.deleteAll({ group: 'team' });

    expect(memories.map((m) => m.content).sort()).toEqual(['fact one', 'fact three', 'fact two']);
    expect(afterOne.memories).toHaveLength(2);
    expect((await client.memories.list({ group: 'team' })).memories).toEqual([]);
  });
});

describe('the client: everything else', () => {
  it('manages secrets, tokens, invites and reads agents, models and whoami', async () => {
    const { token, organizationId } = await newOrganization();
    const client = new AgentSessions({ baseUrl: baseUrl(), token });
    model.enqueue(answer('ok'));
    await client.sessions.run('agents', { user_prompt: 'Hi', agent_name: 'described', agent: agent() });

    const secret = await client.secrets.create({ name: 'API_KEY', value: 'sk-0123456789abcdef' });
    const rotated = await client.secrets.update('API_KEY', { value: 'sk-fedcba9876543210' });
    const secrets = await client.secrets.list();
    await client.secrets.delete('API_KEY');
    const created = await client.tokens.create({ name: 'ci' });
    const keyClient = new AgentSessions({ baseUrl: baseUrl(), token: created.key });
    const asKey = await keyClient.whoami();
    const tokens = await client.tokens.list();
    const invite = await client.invites.create({ email: uniqueEmail('colleague'), organization_id: organizationId, idempotency_key: 'invite-1' });
    const again = await client.invites.create({ email: invite.email, organization_id: organizationId, idempotency_key: 'invite-1' });
    const keyOnTokens = await keyClient.tokens.list().catch((e: unknown) => e);
    await client.tokens.delete(created.id);
    const revoked = await keyClient.whoami().catch((e: unknown) => e);
    const agents = await client.agents.list();
    const detail = await client.agents.get('described');
    const revision = await client.agents.revision('described', detail.current.revision);

    expect(secret).toEqual({ name: 'API_KEY', masked_value: '****cdef' });
    expect(rotated.masked_value).toBe('****3210');
    expect(secrets.secrets).toEqual([{ name: 'API_KEY', masked_value: '****3210' }]);
    await expect(client.secrets.get('API_KEY')).rejects.toBeInstanceOf(NotFoundError);
    expect(asKey).toMatchObject({ kind: 'api_key', organization_id: organizationId, api_key: { id: created.id, name: 'ci' } });
    expect(tokens.tokens.map((t) => t.id)).toContain(created.id);
    expect(again.id).toBe(invite.id);
    expect(keyOnTokens).toBeInstanceOf(AuthenticationError);
    expect(revoked).toBeInstanceOf(AuthenticationError);
    expect(agents.agents.map((a) => a.name)).toEqual(['described']);
    expect(revision.config).toEqual(agent());
    expect((await client.models.list()).models.length).toBeGreaterThan(0);
    expect(await client.whoami()).toMatchObject({ kind: 'user', organization_id: organizationId });
  });
});

// A service of its own that serves waits in 1 s slices, as AWS does in 25 s ones, with a
// quota of 3 invocations.
describe('the client against a service that serves waits in slices', () => {
  let dir: string;
  let cloud: CloudProcess;
  let client: AgentSessions;
  const sent: Sent[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-client-'));
    cloud = await startCloudProcess({
      port: 0,
      dataDir: null,
      env: { FOUNDER_EMAILS: 'dev@localhost', WAIT_SLICE_SECONDS: '1', INVOCATION_QUOTA: '3', ATTEMPT_TIMEOUT_SECONDS: '30' },
      logFile: join(dir, 'service.log'),
    });
    const { token } = await new AgentSessions({ baseUrl: cloud.baseUrl }).localSignIn({ email: 'dev@localhost' });
    client = new AgentSessions({ baseUrl: cloud.baseUrl, token, fetch: recordingFetch(sent) });
  }, 60_000);

  afterAll(async () => {
    await cloud?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('re-attaches with the same key and body after each slice until the run answers', async () => {
    sent.length = 0;
    model.enqueue(delay(2500, answer('Worth the wait')));

    const answered = await client.sessions.run('sliced', { user_prompt: 'Take your time', agent_name: 'slow', agent: agent(), wait_timeout_seconds: 60 });

    const runs = sent.filter((s) => s.method === 'POST');
    expect(answered.message?.content).toBe('Worth the wait');
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.slice(0, -1).map((s) => s.status)).toEqual(runs.slice(0, -1).map(() => 504));
    expect(runs.at(-1)!.status).toBe(200);
    expect(new Set(runs.map((s) => s.key))).toEqual(new Set([answered.invocation_key]));
    expect(new Set(runs.map((s) => s.body)).size).toBe(1);
    // Each re-attach asks only for what is left of the 60 s.
    const waits = runs.map((s) => Number(s.url.searchParams.get('wait_timeout_seconds')));
    expect(waits[0]).toBe(60);
    expect(waits).toEqual([...waits].sort((a, b) => b - a));
    expect(waits.at(-1)!).toBeLessThan(60);
  });

  it('throws GatewayTimeoutError with the key once the whole wait has elapsed; the key re-attaches later', async () => {
    sent.length = 0;
    model.enqueue(delay(5000, answer('Eventually')));
    const params = { user_prompt: 'Longer than you wait', agent_name: 'slow', agent: agent(), idempotency_key: 'outwaited', wait_timeout_seconds: 3 };

    const elapsed = await client.sessions.run('outwaited', params).catch((e: unknown) => e);
    const later = await client.sessions.run('outwaited', { ...params, wait_timeout_seconds: 60 });

    expect(elapsed).toBeInstanceOf(GatewayTimeoutError);
    expect((elapsed as GatewayTimeoutError).invocationKey).toBe('outwaited');
    const firstCall = sent.filter((s) => s.method === 'POST' && Number(s.url.searchParams.get('wait_timeout_seconds')) <= 3);
    expect(firstCall.length).toBeGreaterThan(1);
    expect(firstCall.every((s) => s.status === 504)).toBe(true);
    expect(later.message?.content).toBe('Eventually');
  });

  it('throws QuotaExceededError once the quota is used, without retrying', async () => {
    model.enqueue(answer('third'));
    await client.sessions.run('third', { user_prompt: 'Hi', agent_name: 'a', agent: agent() });
    sent.length = 0;

    const refused = await client.sessions.run('fourth', { user_prompt: 'Hi', agent_name: 'a', agent: agent() }).catch((e: unknown) => e);

    expect(refused).toBeInstanceOf(QuotaExceededError);
    expect(sent).toHaveLength(1);
  });
});

/** A port of 127.0.0.1 that was free a moment ago and is closed now. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the client against nothing', () => {
  it('retries a read on a refused connection, then throws APIConnectionError', async () => {
    const attempts: number[] = [];
    const refusing: typeof fetch = async (input, init) => {
      attempts.push(Date.now());
      return fetch(input, init);
    };
    const port = await closedPort();
    const client = new AgentSessions({ baseUrl: `http://127.0.0.1:${port}`, token: 't', maxRetries: 2, fetch: refusing });

    await expect(client.whoami()).rejects.toMatchObject({ name: 'APIConnectionError', maybeSent: false });
    expect(attempts).toHaveLength(3);
  });

  it('does not re-send a secret once it may have reached the service', async () => {
    // A server that reads the request and drops the connection without answering.
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.once('data', () => socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const client = new AgentSessions({ baseUrl: `http://127.0.0.1:${port}`, token: 't', maxRetries: 2 });

      await expect(client.secrets.create({ name: 'X', value: 'v' })).rejects.toMatchObject({ name: 'APIConnectionError', maybeSent: true });
      expect(connections).toBe(1);
      await expect(client.secrets.list()).rejects.toMatchObject({ name: 'APIConnectionError' });
      expect(connections).toBe(4);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

/** A webhook receiver on 127.0.0.1 that answers 204 and records each delivery. */
async function startReceiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('the client: webhooks and the OTLP export', () => {
  it('creates a webhook whose secret signs its deliveries, lists their tries, and deletes it', { timeout: 60_000 }, async () => {
    const client = await organizationClient();
    const receiver = await startReceiver();
    try {
      const created = await client.webhooks.create({ url: receiver.url, events: ['invocation.succeeded'] });
      const { secret, ...webhook } = created;
      const listed = await client.webhooks.list();
      const read = await client.webhooks.get(created.id);
      const before = await client.webhooks.deliveries(created.id);
      const refused = await client.webhooks.create({ url: 'http://169.254.169.254/latest/meta-data' }).catch((e: unknown) => e);
      model.enqueue(answer('Delivered'));
      const { invocation_key } = await client.sessions.run('hooked', { user_prompt: 'Hi', agent_name: 'a', agent: agent() });
      let tries: WebhookDelivery[] = [];
      await expect.poll(async () => (tries = await client.webhooks.deliveries(created.id, { limit: 1 }).all()).length, { timeout: 30_000, interval: 500 }).toBeGreaterThanOrEqual(1);
      const delivered = receiver.received[0]!;
      await client.webhooks.delete(created.id);

      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(webhook).toEqual({ id: expect.any(String), url: receiver.url, events: ['invocation.succeeded'], created_at: expect.any(String) });
      expect(listed).toEqual({ webhooks: [webhook] });
      expect(read).toEqual(webhook);
      expect(before).toEqual({ deliveries: [] });
      expect(refused).toBeInstanceOf(BadRequestError);
      // Standard Webhooks: v1, HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed by the secret's bytes.
      const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = delivered.headers;
      const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${timestamp}.${delivered.body}`).digest('base64');
      expect(signature).toBe(`v1,${expected}`);
      expect(JSON.parse(delivered.body)).toMatchObject({ type: 'invocation.succeeded', data: { invocation_key } });
      expect(tries[0]).toMatchObject({ event_id: id, invocation_key, type: 'invocation.succeeded', attempt: 1, status_code: 204 });
      await expect(client.webhooks.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(client.webhooks.deliveries(created.id)).rejects.toBeInstanceOf(NotFoundError);
    } finally {
      await receiver.close();
    }
  });

  it('sets, reads and deletes the OTLP export, keeping secret references unresolved', async () => {
    const client = await organizationClient();
    await client.secrets.create({ name: 'OTLP_TOKEN', value: 'otlp-0123456789abcdef' });
    const endpoint = `http://127.0.0.1:${await closedPort()}/v1/traces`;

    const none = await client.integrations.otlp.get().catch((e: unknown) => e);
    const set = await client.integrations.otlp.set({ endpoint, headers: { authorization: 'Bearer {{secret:OTLP_TOKEN}}' } });
    const read = await client.integrations.otlp.get();
    const wrongPath = await client.integrations.otlp.set({ endpoint: endpoint.replace('/v1/traces', '/v1/logs') }).catch((e: unknown) => e);
    const unknownSecret = await client.integrations.otlp.set({ endpoint, headers: { authorization: '{{secret:NO_SUCH_SECRET}}' } }).catch((e: unknown) => e);
    const withPayloads = await client.integrations.otlp.set({ endpoint, payloads: true });
    await client.integrations.otlp.delete();

    expect(none).toBeInstanceOf(NotFoundError);
    expect(set).toEqual({ endpoint, headers: { authorization: 'Bearer {{secret:OTLP_TOKEN}}' }, payloads: false });
    expect(read).toEqual(set);
    expect(wrongPath).toBeInstanceOf(BadRequestError);
    expect(unknownSecret).toBeInstanceOf(BadRequestError);
    expect(withPayloads).toEqual({ endpoint, payloads: true });
    await expect(client.integrations.otlp.get()).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.integrations.otlp.delete()).resolves.toBeUndefined();
  });
});
