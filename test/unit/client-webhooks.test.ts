import { beforeEach, describe, expect, it } from 'vitest';
import { AgentSessions, NotFoundError, ServiceUnavailableError, type WebhookDelivery } from '../../client/index';

interface Call {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

/** A fetch answering from a script of responses, recording each request; no network. */
function scripted() {
  const calls: Call[] = [];
  const responses: Response[] = [];
  const fetch = (async (url: URL, init: RequestInit) => {
    calls.push({ method: init.method ?? 'GET', url: new URL(String(url)), headers: new Headers(init.headers), body: init.body === undefined ? undefined : JSON.parse(String(init.body)) });
    const next = responses.shift();
    if (!next) throw new Error(`no answer scripted for ${init.method} ${String(url)}`);
    return next;
  }) as unknown as typeof globalThis.fetch;
  return { calls, responses, fetch };
}

const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...extra } });
const noContent = () => new Response(null, { status: 204 });

const webhook = { id: 'wh_1', url: 'https://example.test/hooks', events: ['invocation.succeeded', 'invocation.failed'], created_at: '2026-01-01T00:00:00.000Z' };
const delivery = (n: number): WebhookDelivery => ({ event_id: `evt_${n}`, invocation_key: `k-${n}`, type: 'invocation.succeeded', attempt: 1, status_code: 200, time: '2026-01-01T00:00:00.000Z' });

describe('client.webhooks', () => {
  let fake: ReturnType<typeof scripted>;
  let client: AgentSessions;
  beforeEach(() => {
    fake = scripted();
    client = new AgentSessions({ baseUrl: 'http://service.test', token: 't', fetch: fake.fetch });
  });

  it('creates a webhook with its events and returns the secret once given', async () => {
    fake.responses.push(json(201, { ...webhook, secret: 'whsec_abc' }));

    const created = await client.webhooks.create({ url: webhook.url, events: ['invocation.failed'] });

    expect(created.secret).toBe('whsec_abc');
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({ method: 'POST', body: { url: webhook.url, events: ['invocation.failed'] } });
    expect(fake.calls[0]!.url.pathname).toBe('/webhooks');
    expect(fake.calls[0]!.headers.get('authorization')).toBe('Bearer t');
    expect(fake.calls[0]!.headers.get('content-type')).toBe('application/json');
  });

  it('never re-sends a create (it would add a second webhook), but retries a read after a 503', async () => {
    fake.responses.push(json(503, { message: 'unavailable' }, { 'retry-after': '0' }));
    await expect(client.webhooks.create({ url: webhook.url })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(fake.calls).toHaveLength(1);

    fake.responses.push(json(503, { message: 'unavailable' }, { 'retry-after': '0' }), json(200, { webhooks: [webhook] }));
    expect(await client.webhooks.list()).toEqual({ webhooks: [webhook] });
    expect(fake.calls.map((c) => `${c.method} ${c.url.pathname}`)).toEqual(['POST /webhooks', 'GET /webhooks', 'GET /webhooks']);
  });

  it('reads and deletes one webhook by its percent-encoded id, and throws NotFoundError for an unknown one', async () => {
    fake.responses.push(json(200, webhook), noContent(), json(404, { message: 'webhook wh/2 not found' }));

    expect(await client.webhooks.get('wh_1')).toEqual(webhook);
    expect(await client.webhooks.delete('wh_1')).toBeUndefined();
    const missing = await client.webhooks.get('wh/2').catch((error: unknown) => error);

    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toBe('webhook wh/2 not found');
    expect(fake.calls.map((c) => `${c.method} ${c.url.pathname}`)).toEqual(['GET /webhooks/wh_1', 'DELETE /webhooks/wh_1', 'GET /webhooks/wh%2F2']);
  });

  it('awaits to the first page of deliveries and iterates every page by next_cursor', async () => {
    fake.responses.push(json(200, { deliveries: [delivery(3), delivery(2)], next_cursor: 'c2' }));
    const list = client.webhooks.deliveries('wh_1', { limit: 2 });

    const first = await list;
    fake.responses.push(json(200, { deliveries: [delivery(1)] }));
    const all = await list.all();

    expect(first.next_cursor).toBe('c2');
    expect(all.map((d) => d.event_id)).toEqual(['evt_3', 'evt_2', 'evt_1']);
    expect(fake.calls.map((c) => c.url.pathname + c.url.search)).toEqual(['/webhooks/wh_1/deliveries?limit=2', '/webhooks/wh_1/deliveries?after=c2&limit=2']);
  });

  it('starts the deliveries after a given cursor', async () => {
    fake.responses.push(json(200, { deliveries: [] }));

    const items: WebhookDelivery[] = [];
    for await (const item of client.webhooks.deliveries('wh_1', { after: 'c9' })) items.push(item);

    expect(items).toEqual([]);
    expect(fake.calls.map((c) => c.url.search)).toEqual(['?after=c9']);
  });
});

describe('client.integrations.otlp', () => {
  let fake: ReturnType<typeof scripted>;
  let client: AgentSessions;
  beforeEach(() => {
    fake = scripted();
    client = new AgentSessions({ baseUrl: 'http://service.test', token: 't', fetch: fake.fetch });
  });

  const settings = { endpoint: 'https://collector.test/v1/traces', headers: { authorization: 'Bearer {{secret:OTLP}}' }, payloads: true };

  it('puts the settings, reads them back and deletes them', async () => {
    fake.responses.push(json(200, settings), json(200, settings), noContent());

    expect(await client.integrations.otlp.set(settings)).toEqual(settings);
    expect(await client.integrations.otlp.get()).toEqual(settings);
    await client.integrations.otlp.delete();

    expect(fake.calls.map((c) => `${c.method} ${c.url.pathname}`)).toEqual(['PUT /integrations/otlp', 'GET /integrations/otlp', 'DELETE /integrations/otlp']);
    expect(fake.calls[0]!.body).toEqual(settings);
  });

  it('throws NotFoundError while no export is set, as every get does', async () => {
    fake.responses.push(json(404, { message: 'no OTLP export is set' }));

    await expect(client.integrations.otlp.get()).rejects.toBeInstanceOf(NotFoundError);
  });
});
