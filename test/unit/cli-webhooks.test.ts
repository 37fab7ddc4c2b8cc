import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WebhookDelivery } from '../../client/types';
import { EXIT } from '../../cli/errors';
import { runCli, type Io } from '../../cli/main';

interface Call {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

type Handler = (call: Call) => Response;

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const noContent = () => new Response(null, { status: 204 });

const webhook = { id: 'wh_1', url: 'https://example.test/hooks', events: ['invocation.succeeded', 'invocation.failed'], created_at: '2026-01-01T00:00:00.000Z' };
const delivery = (n: number, result: Partial<WebhookDelivery> = { status_code: 200 }): WebhookDelivery => ({
  event_id: `evt_${n}`,
  invocation_key: `k-${n}`,
  type: 'invocation.failed',
  attempt: n,
  time: `2026-01-01T00:00:0${n}.000Z`,
  ...result,
});
const settings = { endpoint: 'https://collector.test/v1/traces', headers: { authorization: 'Bearer {{secret:OTLP}}', 'x-team': 'a=b' }, payloads: true };

/** The service as a fetch answering `routes` ("METHOD /path"), recording each request; no network. */
function fakeService(routes: Record<string, Handler>) {
  const calls: Call[] = [];
  const fetch = async (input: URL, init: RequestInit) => {
    const url = new URL(String(input));
    const call = { method: init.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), body: init.body === undefined ? undefined : JSON.parse(String(init.body)) };
    calls.push(call);
    const handler = routes[`${call.method} ${call.path}`];
    return handler ? handler(call) : json(404, { message: `no route ${call.method} ${call.path}` });
  };
  return { calls, fetch };
}

function io() {
  const out = { stdout: '', stderr: '' };
  const streams: Io = {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
    stdin: (async function* () {})(),
    env: { AGENT_SESSIONS_CONFIG: '/nonexistent/config.json', AGENT_SESSIONS_URL: 'http://service.test', AGENT_SESSIONS_TOKEN: 't' },
  };
  return { out, streams };
}

describe('webhooks and integrations from the command line', () => {
  let service: ReturnType<typeof fakeService>;
  const serve = (routes: Record<string, Handler>) => {
    service = fakeService(routes);
    vi.stubGlobal('fetch', service.fetch);
  };
  beforeEach(() => serve({}));
  afterEach(() => vi.unstubAllGlobals());

  async function cli(...argv: string[]) {
    const { out, streams } = io();
    const code = await runCli(argv, streams);
    return { code, ...out };
  }

  it('lists the commands in help, with a repeatable --header', async () => {
    const main = await cli('--help');
    const set = await cli('integrations', 'otlp', 'set', '--help');

    for (const name of ['webhooks create <url>', 'webhooks list', 'webhooks show <id>', 'webhooks deliveries <id>', 'webhooks delete <id>', 'integrations otlp set', 'integrations otlp show', 'integrations otlp delete']) {
      expect(main.stdout).toContain(`  ${name}`);
    }
    expect(set.stdout).toMatch(/^usage: agent-sessions integrations otlp set \[options\]/);
    expect(set.stdout).toContain('--header NAME=VALUE ...');
    expect(set.stdout).toContain('--payloads');
  });

  it.each([
    [['webhooks', 'create'], /usage: agent-sessions webhooks create <url> \[options\]/],
    [['webhooks', 'create', 'https://x.test', '--events', 'invocation.succeeded,invocation.started'], /--events must be a comma-separated list of invocation.succeeded, invocation.failed, not "invocation.started"/],
    [['webhooks', 'create', 'https://x.test', '--events', ','], /--events must be a comma-separated list/],
    [['webhooks', 'deliveries'], /usage: agent-sessions webhooks deliveries <id>/],
    [['webhooks', 'deliveries', 'wh_1', '--limit', '101'], /--limit must be a whole number from 1 to 100, not "101"/],
    [['webhooks', 'nope'], /"webhooks" needs a subcommand: webhooks list, webhooks show/],
    [['integrations'], /"integrations" needs a subcommand: integrations otlp set, integrations otlp show, integrations otlp delete/],
    [['integrations', 'otlp'], /"integrations otlp" needs a subcommand: integrations otlp set/],
    [['integrations', 'otlp', 'set'], /--endpoint is required/],
    [['integrations', 'otlp', 'set', '--endpoint', 'https://c.test/v1/traces', '--header', 'no-value'], /--header must be NAME=VALUE, not "no-value"/],
    [['integrations', 'otlp', 'set', '--endpoint', 'https://c.test/v1/traces', '--header', 'A=1', '--header', 'a=2'], /--header a is given twice/],
  ])('exits 2 for bad usage, sending nothing: %j', async (argv, message) => {
    const result = await cli(...argv);

    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toMatch(message);
    expect(service.calls).toEqual([]);
  });

  it('creates a webhook: the secret alone on stdout, and a warning that it is not shown again', async () => {
    serve({ 'POST /webhooks': () => json(201, { ...webhook, events: ['invocation.failed'], secret: 'whsec_c2VjcmV0' }) });

    const human = await cli('webhooks', 'create', webhook.url, '--events', 'invocation.failed');
    const scripted = await cli('webhooks', 'create', webhook.url, '--json');

    expect(human).toMatchObject({ code: 0, stdout: 'whsec_c2VjcmV0\n' });
    expect(human.stderr).toBe('Webhook wh_1 for https://example.test/hooks (invocation.failed).\nIts signing secret (above) is shown only once: it will not be shown again.\n');
    expect(JSON.parse(scripted.stdout)).toMatchObject({ id: 'wh_1', secret: 'whsec_c2VjcmV0' });
    expect(scripted.stderr).toBe('');
    expect(service.calls.map((c) => c.body)).toEqual([{ url: webhook.url, events: ['invocation.failed'] }, { url: webhook.url }]);
  });

  it('lists webhooks as a table (the group alone lists too), shows one, and deletes one', async () => {
    serve({
      'GET /webhooks': () => json(200, { webhooks: [webhook] }),
      'GET /webhooks/wh_1': () => json(200, webhook),
      'DELETE /webhooks/wh_1': () => noContent(),
    });

    const list = await cli('webhooks');
    const show = await cli('webhooks', 'show', 'wh_1');
    const deleted = await cli('webhooks', 'delete', 'wh_1', '--json');
    const missing = await cli('webhooks', 'delete', 'wh_2');

    expect(list.stdout).toBe(
      'ID    URL                         EVENTS                                  CREATED\n' +
        'wh_1  https://example.test/hooks  invocation.succeeded,invocation.failed  2026-01-01T00:00:00.000Z\n',
    );
    expect(show.stdout).toBe('id:      wh_1\nurl:     https://example.test/hooks\nevents:  invocation.succeeded, invocation.failed\ncreated: 2026-01-01T00:00:00.000Z\n');
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: 'wh_1' });
    expect(missing).toMatchObject({ code: EXIT.notFound, stderr: 'error: not found: no route DELETE /webhooks/wh_2\n' });
  });

  it('shows deliveries with their status code or error, a hint for the next page, and every page with --all', async () => {
    const pages: Record<string, unknown> = {
      first: { deliveries: [delivery(3), delivery(2, { status_code: 503 })], next_cursor: 'c2' },
      c2: { deliveries: [delivery(1, { error: 'no answer within 10 s' })] },
    };
    serve({ 'GET /webhooks/wh_1/deliveries': (call) => json(200, pages[call.query.after ?? 'first']) });

    const page = await cli('webhooks', 'deliveries', 'wh_1', '--limit', '2');
    const all = await cli('webhooks', 'deliveries', 'wh_1', '--limit', '2', '--all', '--json');

    expect(page.stdout.split('\n')).toEqual([
      'TIME                      EVENT  INVOCATION  TYPE               ATTEMPT  RESULT',
      '2026-01-01T00:00:03.000Z  evt_3  k-3         invocation.failed  3        200',
      '2026-01-01T00:00:02.000Z  evt_2  k-2         invocation.failed  2        503',
      '',
    ]);
    expect(page.stderr).toBe('more: add --after c2 (or --all)\n');
    expect(JSON.parse(all.stdout)).toEqual({ deliveries: [delivery(3), delivery(2, { status_code: 503 }), delivery(1, { error: 'no answer within 10 s' })] });
    expect(service.calls.map((c) => c.query)).toEqual([{ limit: '2' }, { limit: '2' }, { limit: '2', after: 'c2' }]);
    const last = await cli('webhooks', 'deliveries', 'wh_1', '--after', 'c2');
    expect(last.stdout).toContain('k-1         invocation.failed  1        error: no answer within 10 s');
  });

  it('sets the OTLP export with repeated headers (values kept as given), shows it and deletes it', async () => {
    serve({
      'PUT /integrations/otlp': () => json(200, settings),
      'GET /integrations/otlp': () => json(200, settings),
      'DELETE /integrations/otlp': () => noContent(),
    });

    const set = await cli('integrations', 'otlp', 'set', '--endpoint', settings.endpoint, '--header', 'authorization=Bearer {{secret:OTLP}}', '--header', 'x-team=a=b', '--payloads');
    const plain = await cli('integrations', 'otlp', 'set', '--endpoint', settings.endpoint);
    const show = await cli('integrations', 'otlp', 'show');
    const scripted = await cli('integrations', 'otlp', 'show', '--json');
    const deleted = await cli('integrations', 'otlp', 'delete');

    expect(service.calls[0]!.body).toEqual(settings);
    expect(service.calls[1]!.body).toEqual({ endpoint: settings.endpoint, payloads: false });
    expect(set.stdout).toBe(`Exporting finished invocations:\n${show.stdout}`);
    expect(show.stdout).toBe('endpoint: https://collector.test/v1/traces\npayloads: on\nheader:   authorization: Bearer {{secret:OTLP}}\nheader:   x-team: a=b\n');
    expect(JSON.parse(scripted.stdout)).toEqual(settings);
    expect(deleted).toMatchObject({ code: 0, stdout: 'Stopped the OTLP export\n' });
  });

  it('exits 6 when no OTLP export is set', async () => {
    serve({ 'GET /integrations/otlp': () => json(404, { message: 'no OTLP export is set' }) });

    const shown = await cli('integrations', 'otlp', 'show', '--json');

    expect(shown.code).toBe(EXIT.notFound);
    expect(JSON.parse(shown.stderr)).toEqual({ error: { message: 'no OTLP export is set', status: 404, exit_code: EXIT.notFound } });
  });
});
