/**
 * The web console end to end, in Debian's Chromium driven by playwright-core: runs go
 * through the API, then the pages must show them: the trace tree with a payload and its
 * SHA-256, the superseded attempt of a run that was retried, a live run whose spans
 * appear while it runs and which the page cancels, a session's conversation and audit
 * log, secrets whose value is never shown again, and payloads holding markup shown as
 * text and never run. Screenshots of the main pages go to `test-results/console/`.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentSessions, NotFoundError, type AgentConfig } from '../../client/index';
import { buildConsole, MAX_SCRIPT_GZIP_BYTES } from '../../console/build';
import { securityHeaders, type ConsoleConfig } from '../../console/config';
import { sideBySide } from '../../console/src/diff';
import { PayloadLoader, treeRows } from '../../console/src/trace-model';
import type { Span } from '../../client/index';
import { answer, delay, startFakeOpenAI, status, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { baseUrl, newOrganization, request } from './support';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(process.cwd(), 'test-results', 'console');
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' URL; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const SOON = { 'retry-after-ms': '10' };

let browser: Browser;
let model: FakeOpenAIServer;
let organization: { token: string; email: string };
let client: AgentSessions;
/** What the pages of a test did that they must not: dialogs, uncaught errors, console errors (CSP violations among them). */
let problems: string[] = [];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the console's browser tests need Chromium at ${CHROMIUM} (apt-get install -y chromium); CI installs it`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  model = await startFakeOpenAI();
  organization = await newOrganization();
  client = new AgentSessions({ baseUrl: baseUrl(), token: organization.token });
  await mkdir(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await model?.close();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  const seen = problems;
  problems = [];
  expect(seen).toEqual([]);
});

const agent = (extra: Partial<AgentConfig> = {}): AgentConfig => ({ model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, ...extra });

interface OpenOptions {
  /** Default true: the token in sessionStorage, as the sign-in form leaves it. */
  signedIn?: boolean;
  /** Console errors the test expects (the browser logs every failed request). */
  expectedErrors?: RegExp;
  /** Runs on the context before the page opens (routes). */
  setup?: (context: BrowserContext) => Promise<void>;
}

/** A new page at `path`, 1280×800, whose dialogs and errors are recorded as problems. */
async function open(path: string, options: OpenOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  await options.setup?.(context);
  if (options.signedIn !== false) {
    await context.addInitScript((token) => {
      // Runs in the page, which has a sessionStorage (this file is typed for Node).
      const storage = (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void } }).sessionStorage;
      if (!storage.getItem('agent-sessions.token')) storage.setItem('agent-sessions.token', token);
    }, organization.token);
  }
  const page = await context.newPage();
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !options.expectedErrors?.test(message.text())) problems.push(`console error: ${message.text()}`);
  });
  await page.goto(`${baseUrl()}${path}`);
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** Runs a session to its end through the API; its invocation key. */
async function run(sessionId: string, prompt: string, key: string, config: AgentConfig = agent(), agentName = 'console-agent'): Promise<string> {
  const ran = await client.sessions.run(sessionId, { user_prompt: prompt, agent_name: agentName, agent: config, idempotency_key: key });
  return ran.invocation_key;
}

const span = (id: string, parent: string | null = null, extra: Partial<Span> = {}): Span => ({
  id, parent_id: parent, type: parent ? 'tool_call' : 'model_call', name: 'n', status: 'SUCCEEDED',
  started_at: '2026-01-01T00:00:00.000Z', ended_at: '2026-01-01T00:00:01.000Z', usage: null, ...extra,
});

/** GET /traces/{key}/spans/{id} over `spans`: undefined for one not written yet. */
function fakeSpans(spans: Span[]) {
  const asked: string[] = [];
  const fetchSpan = async (id: string): Promise<Span | undefined> => {
    asked.push(id);
    const found = spans.find((item) => item.id === id);
    return found && { ...found, input: { id }, input_sha256: `sha-${id}` };
  };
  return { asked, fetchSpan };
}

describe('the trace page model', () => {
  it('reads any span in one request, and an ended one only once', async () => {
    const spans = Array.from({ length: 500 }, (_, i) => span(`inv-1.att-1.${i + 1}`));
    const { asked, fetchSpan } = fakeSpans(spans);
    const loader = new PayloadLoader(fetchSpan);

    expect((await loader.get(spans[499]!))?.input_sha256).toBe('sha-inv-1.att-1.500');
    expect((await loader.get(spans[30]!))?.input).toEqual({ id: 'inv-1.att-1.31' });
    expect(await loader.get(spans[499]!)).toBeDefined();
    expect(asked).toEqual(['inv-1.att-1.500', 'inv-1.att-1.31']);
  });

  it('says a span is not readable yet until it is written, and reads a running one again', async () => {
    const spans: Span[] = [];
    const { asked, fetchSpan } = fakeSpans(spans);
    const loader = new PayloadLoader(fetchSpan);
    const running = span('inv-1.att-1.1', null, { status: 'RUNNING', ended_at: null });

    expect(await loader.get(running)).toBeUndefined();
    spans.push(running);
    expect((await loader.get(running))?.input_sha256).toBe('sha-inv-1.att-1.1');
    expect(await loader.get(running)).toBeDefined();
    expect(asked).toHaveLength(3);
  });

  it('lays spans out as a tree, hides superseded attempts and collapsed children', () => {
    const spans = [span('inv-1.att-2.3'), span('inv-1.att-2.1'), span('inv-1.att-2.2', 'inv-1.att-2.1'), span('inv-1.att-1.1')];
    const rows = (showSuperseded: boolean, collapsed: string[] = []) =>
      treeRows(spans, { latestAttempt: 2, showSuperseded, collapsed: new Set(collapsed) }).map((row) => [row.span.id, row.depth, row.superseded]);
    expect(rows(false)).toEqual([['inv-1.att-2.1', 0, false], ['inv-1.att-2.2', 1, false], ['inv-1.att-2.3', 0, false]]);
    expect(rows(true)[0]).toEqual(['inv-1.att-1.1', 0, true]);
    expect(rows(false, ['inv-1.att-2.1'])).toEqual([['inv-1.att-2.1', 0, false], ['inv-1.att-2.3', 0, false]]);
  });

  it('pairs changed lines side by side', () => {
    const rows = sideBySide('a\nb\nc', 'a\nB\nc\nd');
    expect(rows.map((row) => [row.kind, row.left?.text, row.right?.text])).toEqual([
      ['same', 'a', 'a'],
      ['changed', 'b', 'B'],
      ['same', 'c', 'c'],
      ['added', undefined, 'd'],
    ]);
  });
});

describe('the console as served', () => {
  // Not in the root `tsc --noEmit`: Preact's JSX types bring lib.dom into any program that
  // imports them, and lib.dom's fetch types break Node code. The app has its own program.
  it('typechecks as its own program (console/tsconfig.json)', () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(join(process.cwd(), 'console', 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    })!;
    const program = ts.createProgram(parsed.fileNames, parsed.options);
    const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.formatDiagnostic(diagnostic, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' }));
    expect(parsed.fileNames.some((file) => file.endsWith('console/src/main.tsx'))).toBe(true);
    expect(errors).toEqual([]);
  });

  it('serves index.html for deep links, config.json, hashed assets, and strict security headers', async () => {
    const csp = CSP.replace('URL', baseUrl());
    for (const path of ['/console/', '/console/sessions/s-1', '/console/sessions/v1.2', '/console/traces/some%20key', '/console/traces/run.json', '/console/agents/a', '/console/secrets']) {
      const response = await fetch(`${baseUrl()}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe(csp);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await response.text()).toContain('<div id="app">');
    }
    const config = await request('GET', '/console/config.json');
    expect(config.body).toEqual({ apiUrl: baseUrl(), signIn: { kind: 'local' } });
    expect(config.headers['content-security-policy']).toBe(csp);
    expect((await request('GET', '/console/assets/missing.js')).status).toBe(404);
    expect((await request('GET', '/console/favicon.ico')).status).toBe(404);
    const bare = await fetch(`${baseUrl()}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/console/');

    const built = await buildConsole();
    const script = await fetch(`${baseUrl()}/console/${built.script}`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('x-content-type-options')).toBe('nosniff');
    const bytes = Buffer.from(await script.arrayBuffer());
    expect(bytes.equals(await readFile(join(built.dir, built.script)))).toBe(true);
    expect(gzipSync(bytes).length).toBeLessThanOrEqual(MAX_SCRIPT_GZIP_BYTES);
  });
});

describe('the console in a browser', () => {
  it('signs in with the email form, then lists sessions newest first', async () => {
    await run('console-older', 'first', 'console-older-1');
    await run('console-newer', 'second', 'console-newer-1');
    const page = await open('/console/sessions', { signedIn: false });
    await page.waitForURL(/\/console\/sign-in\?next=/);
    await shot(page, 'sign-in');

    await page.getByTestId('email').fill(organization.email);
    await page.getByTestId('email').press('Enter');

    await page.waitForURL(`${baseUrl()}/console/sessions`);
    await expect.poll(() => page.getByTestId('whoami').textContent()).toBe(organization.email.toLowerCase());
    // The token is kept in this tab's sessionStorage, nowhere else.
    expect(await page.evaluate<unknown[]>('[sessionStorage.getItem("agent-sessions.token") !== null, localStorage.length, document.cookie]')).toEqual([true, 0, '']);
    const ids = await page.getByTestId('session-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-session-id')));
    expect(ids.indexOf('console-newer')).toBeLessThan(ids.indexOf('console-older'));
    expect(ids.indexOf('console-older')).toBeGreaterThanOrEqual(0);
    await shot(page, 'sessions');
  });

  it('signs in through the Cognito hosted UI with PKCE when config.json says so', async () => {
    const domain = 'https://auth.console.test';
    const config: ConsoleConfig = { apiUrl: baseUrl(), signIn: { kind: 'cognito', domain, clientId: 'console-client', redirectUri: `${baseUrl()}/console/callback` } };
    let authorize: URLSearchParams | undefined;
    let exchange: URLSearchParams | undefined;
    const page = await open('/console/sessions', {
      signedIn: false,
      setup: async (context) => {
        // The console as the stack deploys it: its config.json, and the CSP that goes with it.
        await context.route(`${baseUrl()}/console/**`, async (route) => {
          const headers = { ...securityHeaders(config), 'cache-control': 'no-store' };
          if (new URL(route.request().url()).pathname === '/console/config.json') return route.fulfill({ status: 200, headers, json: config });
          const response = await route.fetch();
          return route.fulfill({ response, headers: { ...response.headers(), ...headers } });
        });
        await context.route(`${domain}/**`, async (route) => {
          const url = new URL(route.request().url());
          if (url.pathname === '/oauth2/authorize') {
            authorize = url.searchParams;
            const back = new URL(url.searchParams.get('redirect_uri')!);
            back.search = new URLSearchParams({ code: 'the-code', state: url.searchParams.get('state')! }).toString();
            // The hosted UI signs the user in and sends the browser back (a fresh navigation, so routed too).
            return route.fulfill({ status: 200, contentType: 'text/html', body: `<meta http-equiv="refresh" content="0;url=${back.href.replaceAll('&', '&amp;')}">` });
          }
          if (url.pathname === '/oauth2/token' && route.request().method() === 'POST') {
            exchange = new URLSearchParams(route.request().postData() ?? '');
            return route.fulfill({ status: 200, headers: { 'access-control-allow-origin': baseUrl() }, json: { id_token: organization.token, access_token: 'unused', token_type: 'Bearer', expires_in: 3600 } });
          }
          return route.fulfill({ status: 404, body: 'no such page' });
        });
      },
    });
    await page.waitForURL(/\/console\/sign-in\?next=/);
    await page.getByTestId('sign-in').click();

    await page.waitForURL(`${baseUrl()}/console/sessions`);
    await expect.poll(() => page.getByTestId('whoami').textContent()).toBe(organization.email.toLowerCase());
    expect(Object.fromEntries(authorize!)).toMatchObject({
      response_type: 'code',
      client_id: 'console-client',
      redirect_uri: `${baseUrl()}/console/callback`,
      code_challenge_method: 'S256',
      scope: 'openid email',
    });
    expect(Object.fromEntries(exchange!)).toMatchObject({ grant_type: 'authorization_code', client_id: 'console-client', code: 'the-code', redirect_uri: `${baseUrl()}/console/callback` });
    const verifier = exchange!.get('code_verifier')!;
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(authorize!.get('code_challenge'));
  });

  it("shows the API's message when a page cannot load", async () => {
    const page = await open('/console/traces/no-such-invocation', { expectedErrors: /status of 404/ });
    await expect.poll(() => page.getByTestId('error').textContent()).toBe('invocation no-such-invocation not found (404)');
  });

  it('shows a trace as a tree with payloads fetched on expand, with their SHA-256', async () => {
    model.enqueue(toolCall('lookup', { q: 'weather' }), answer('It is sunny.'));
    const key = await run('console-tree', 'What is the weather?', 'console-tree-1');
    const stored = await client.traces.get(key, { payloads: true });
    const page = await open(`/console/traces/${key}`);

    const rows = page.getByTestId('span-row');
    await expect.poll(() => rows.count()).toBe(3);
    const tree = await page.getByTestId('span').evaluateAll((items) => items.map((item) => [item.getAttribute('data-span-id'), item.getAttribute('aria-level')]));
    expect(tree).toEqual([
      ['inv-1.att-1.1', '1'],
      ['inv-1.att-1.2', '2'],
      ['inv-1.att-1.3', '1'],
    ]);
    await expect.poll(() => page.getByTestId('trace-tokens').textContent()).toBe('24 in / 6 out');

    await rows.first().click();
    const details = page.getByTestId('span-details');
    await expect.poll(() => details.getByTestId('payload-input-sha256').textContent()).toBe(stored.spans[0]!.input_sha256);
    expect(await details.getByTestId('payload-output-sha256').textContent()).toBe(stored.spans[0]!.output_sha256);
    expect(await details.getByTestId('payload-input-text').textContent()).toBe(JSON.stringify(stored.spans[0]!.input, null, 2));
    expect(await details.getByTestId('payload-input-bytes').getAttribute('title')).toBe(`${stored.spans[0]!.input_bytes} bytes`);
    await shot(page, 'trace');

    // The keyboard reaches the next row and opens it.
    await rows.first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('span-details').count()).toBe(2);

    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'trace-phone');
  });

  it('marks a truncated payload and shows its preview', async () => {
    const big = 'x'.repeat(70 * 1024);
    model.enqueue(answer('short'));
    const key = await run('console-big', big, 'console-big-1');
    const page = await open(`/console/traces/${key}`);
    await page.getByTestId('span-row').first().click();
    await expect.poll(() => page.getByTestId('payload-input-truncated').count()).toBe(1);
    const preview = await page.getByTestId('payload-input-text').textContent();
    expect(preview!.length).toBeLessThanOrEqual(4096);
    expect(preview).toContain('xxxx');
  });

  it('shows the superseded spans of a retried run behind a toggle', async () => {
    model.enqueue(status(500, undefined, SOON), status(500, undefined, SOON), status(500, undefined, SOON), answer('second time'));
    const key = await run('console-retry', 'try twice', 'console-retry-1');
    const page = await open(`/console/traces/${key}`);

    const rows = page.getByTestId('span-row');
    await expect.poll(() => page.getByTestId('attempt-row').count()).toBe(2);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-span-id')).toBe('inv-1.att-2.1');

    await page.getByTestId('toggle-superseded').check();
    await expect.poll(() => rows.count()).toBe(2);
    const shown = await rows.evaluateAll((items) => items.map((item) => [item.getAttribute('data-span-id'), item.getAttribute('data-superseded'), item.getAttribute('data-status')]));
    expect(shown).toEqual([
      ['inv-1.att-1.1', 'true', 'FAILED'],
      ['inv-1.att-2.1', 'false', 'SUCCEEDED'],
    ]);
    // A superseded span's payloads come from the pages of every attempt.
    await rows.first().click();
    const all = await client.traces.get(key, { payloads: true, attempts: 'all' });
    await expect.poll(() => page.getByTestId('payload-input-sha256').first().textContent()).toBe(all.spans[0]!.input_sha256);
    await shot(page, 'trace-superseded');
  });

  it('follows a running invocation live, then cancels it', async () => {
    model.enqueue(delay(1200, toolCall('lookup', { q: 1 })), delay(1200, toolCall('lookup', { q: 2 })), delay(5000, answer('too late')));
    await client.sessions.run('console-live', { user_prompt: 'take your time', agent_name: 'console-agent', agent: agent(), idempotency_key: 'console-live-1', wait_timeout_seconds: 0 });
    const page = await open('/console/traces/console-live-1');

    const rows = page.getByTestId('span-row');
    await page.getByTestId('live').waitFor();
    // The first model call shows while it runs, then the rest arrive as they start.
    await page.locator('[data-testid=span-row][data-status=RUNNING]').first().waitFor({ timeout: 5000 });
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    const trace = await client.traces.get('console-live-1', { payloads: false });
    expect(trace.status).toBe('RUNNING');
    expect(await page.getByTestId('live').count()).toBe(1);
    await shot(page, 'trace-live');

    await page.getByTestId('cancel').click();

    await expect.poll(() => page.getByTestId('trace-summary').getByTestId('status').textContent()).toBe('FAILED');
    await expect.poll(() => page.getByTestId('failure').textContent()).toMatch(/interrupted.*cancelled/s);
    await expect.poll(() => page.getByTestId('live').count()).toBe(0);
    expect(await page.getByTestId('cancel').count()).toBe(0);
    const cancelled = await client.traces.get('console-live-1', { payloads: false });
    expect(cancelled).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted' } });
    // Every span the page shows is the stored one's final state.
    const statuses = await rows.evaluateAll((items) => items.map((item) => item.getAttribute('data-status')));
    expect(statuses).not.toContain('RUNNING');
  });

  it("shows a session's conversation, its invocations and its audit log", async () => {
    model.enqueue(answer('Hello back.'));
    const key = await run('console-chat', 'Hello there', 'console-chat-1');
    const page = await open('/console/sessions/console-chat');

    const messages = page.getByTestId('message');
    await expect.poll(() => messages.count()).toBe(2);
    expect(await messages.evaluateAll((items) => items.map((item) => [item.getAttribute('data-role'), item.querySelector('pre')?.textContent]))).toEqual([
      ['user', 'Hello there'],
      ['assistant', 'Hello back.'],
    ]);
    await expect.poll(() => page.getByTestId('audit-row').count()).toBeGreaterThanOrEqual(3);
    const types = await page.getByTestId('audit-row').evaluateAll((items) => items.map((item) => item.getAttribute('data-type')));
    expect(types).toEqual(expect.arrayContaining(['agent_invocation', 'llm_call', 'run_succeeded']));
    await shot(page, 'session');

    await page.getByTestId('trace-row').getByRole('link', { name: key }).click();
    await page.waitForURL(`${baseUrl()}/console/traces/${key}`);
    await expect.poll(() => page.getByTestId('span-row').count()).toBe(1);
  });

  it('searches invocations with filters and shows their tokens and cost', async () => {
    model.enqueue(answer('filtered'));
    await run('console-search', 'find me', 'console-search-1', agent(), 'console-searched');
    const page = await open('/console/traces');
    await page.getByTestId('filter-agent_name').fill('console-searched');
    await page.getByTestId('filter-status').selectOption('SUCCEEDED');
    await page.getByTestId('search').click();

    await page.waitForURL(/agent_name=console-searched/);
    await expect.poll(() => page.getByTestId('trace-row').count()).toBe(1);
    const row = page.getByTestId('trace-row');
    expect(await row.getAttribute('data-invocation-key')).toBe('console-search-1');
    expect(await row.textContent()).toContain('12 in / 3 out');
    await shot(page, 'traces');
  });

  it("diffs two revisions of an agent's configuration side by side", async () => {
    model.enqueue(answer('one'), answer('two'));
    await run('console-rev-1', 'a', 'console-rev-1', agent({ system_prompt: 'Be brief.' }), 'console-diffed');
    await run('console-rev-2', 'b', 'console-rev-2', agent({ system_prompt: 'Be thorough.', max_steps: 5 }), 'console-diffed');
    const page = await open('/console/agents/console-diffed');

    await expect.poll(() => page.getByTestId('revision-row').count()).toBe(2);
    const diff = page.getByTestId('config-diff');
    await expect.poll(() => diff.locator('tr[data-kind=changed]').count()).toBeGreaterThanOrEqual(1);
    expect(await diff.textContent()).toContain('Be brief.');
    expect(await diff.textContent()).toContain('Be thorough.');
    expect(await diff.locator('tr[data-kind=added] td.added').first().textContent()).toContain('max_steps');
    await shot(page, 'agent');
  });

  it('creates a secret and never shows its value again; rotates and deletes it', async () => {
    const value = 'sk-console-0123456789abcdef';
    const page = await open('/console/secrets');
    await page.getByTestId('secret-name').fill('CONSOLE_KEY');
    await page.getByTestId('secret-value').fill(value);
    await page.getByTestId('secret-create').click();

    await expect.poll(() => page.getByTestId('secret-notice').textContent()).toBe('Saved CONSOLE_KEY (****cdef).');
    const row = page.locator('[data-testid=secret-row][data-secret-name=CONSOLE_KEY]');
    expect(await row.getByTestId('secret-mask').textContent()).toBe('****cdef');
    expect(await page.getByTestId('secret-value').inputValue()).toBe('');
    expect(await page.content()).not.toContain(value);
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(value);
    await shot(page, 'secrets');

    await row.getByTestId('rotate-secret').click();
    await row.getByTestId('rotate-value').fill('sk-console-rotated-99999999');
    await row.getByTestId('rotate-save').click();
    await expect.poll(() => row.getByTestId('secret-mask').textContent()).toBe('****9999');
    await row.getByTestId('delete-secret').click();
    await row.getByTestId('delete-secret-confirm').click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await client.secrets.list()).secrets.map((secret) => secret.name)).not.toContain('CONSOLE_KEY');
  });

  it('shows a new API key once and revokes it', async () => {
    const page = await open('/console/api-keys');
    await page.getByTestId('key-name').fill('console key');
    await page.getByTestId('key-create').click();
    const key = await page.getByTestId('created-key-value').textContent();
    expect(key).toBeTruthy();
    expect((await request('GET', '/whoami', { token: key! })).status).toBe(200);
    await shot(page, 'api-keys');

    await page.reload();
    await page.getByTestId('api-key-row').first().waitFor();
    expect(await page.content()).not.toContain(key!);
    await page.locator('[data-testid=api-key-row]', { hasText: 'console key' }).getByTestId('revoke-key').click();
    await page.getByTestId('revoke-key-confirm').click();
    await expect.poll(() => page.locator('[data-testid=api-key-row]', { hasText: 'console key' }).count()).toBe(0);
    expect((await request('GET', '/whoami', { token: key! })).status).toBe(401);
  });

  it("lists a group's memories and deletes one", async () => {
    model.enqueue(toolCall('memory_write', { content: 'The user likes tea.' }), toolCall('memory_write', { content: 'The user lives in Lyon.' }), answer('Noted.'));
    await run('console-memory', 'remember this', 'console-memory-1', agent({ memory: { group: 'console-group', generation: ['agent'] } }));
    const page = await open('/console/memories?group=console-group');

    const rows = page.getByTestId('memory-row');
    await expect.poll(() => rows.count()).toBe(2);
    await shot(page, 'memories');
    await rows.filter({ hasText: 'tea' }).getByTestId('delete-memory').click();
    await page.getByTestId('delete-memory-confirm').click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Lyon');
  });

  it('lists the models with their prices', async () => {
    const page = await open('/console/models');
    const { models } = await client.models.list();
    await expect.poll(() => page.getByTestId('model-row').count()).toBe(models.length);
    await shot(page, 'models');
  });

  it('shows payloads holding markup as text and runs none of it', async () => {
    const markup = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2; alert(1)">';
    model.enqueue(answer(`Echo: ${markup}`));
    const key = await run('console-xss', markup, 'console-xss-1');
    const page = await open(`/console/traces/${key}`);
    await page.getByTestId('span-row').first().click();

    const input = page.getByTestId('payload-input-text');
    await expect.poll(() => input.textContent()).toContain(markup.replaceAll('"', '\\"'));
    await expect.poll(() => page.getByTestId('payload-output-text').textContent()).toContain('<img src=x onerror=');
    const session = await open('/console/sessions/console-xss');
    await expect.poll(() => session.getByTestId('message-content').first().textContent()).toBe(markup);

    for (const shown of [page, session]) {
      expect(await shown.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(await shown.locator('main img, main script').count()).toBe(0);
    }
  });
});

describe('the console: webhooks and the OTLP export', () => {
  // Chromium logs the 404 of GET /integrations/otlp while none is set, and the 400 of a refused one.
  const expectedErrors = /status of 40[04]/;

  it('creates a webhook showing its secret once, lists its deliveries with links to their traces, and deletes it', { timeout: 60_000 }, async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      req.resume().on('end', () => {
        received.push(String(req.headers['webhook-id']));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/console-hooks`;
    try {
      const page = await open('/console/webhooks', { expectedErrors });
      await page.getByTestId('webhook-url').fill(url);
      await page.getByTestId('webhook-event-invocation.failed').uncheck();
      await page.getByTestId('webhook-create').click();

      const secret = await page.getByTestId('created-webhook-secret').textContent();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const row = page.locator('[data-testid=webhook-row]', { hasText: url });
      await row.waitFor();
      expect(await row.textContent()).toContain('invocation.succeeded');
      expect(await row.textContent()).not.toContain('invocation.failed');
      expect((await client.webhooks.list()).webhooks.find((webhook) => webhook.url === url)?.events).toEqual(['invocation.succeeded']);
      await shot(page, 'webhooks');
      await page.reload();
      await row.waitFor();
      expect(await page.content()).not.toContain(secret!);

      await row.getByTestId('show-deliveries').click();
      await expect.poll(() => page.getByTestId('deliveries').textContent()).toContain('No deliveries.');
      model.enqueue(answer('Hooked'));
      const key = await run('console-webhook', 'Hi', 'console-webhook-1');
      const delivery = page.getByTestId('delivery-row');
      await expect
        .poll(
          async () => {
            if ((await delivery.count()) === 0) await page.getByTestId('reload-deliveries').click();
            return delivery.count();
          },
          { timeout: 30_000, interval: 1000 },
        )
        .toBeGreaterThanOrEqual(1);
      expect(received.length).toBeGreaterThanOrEqual(1);
      expect(await delivery.first().getByTestId('delivery-result').textContent()).toBe('204');
      expect(await delivery.first().textContent()).toContain(received[0]!);
      expect(await delivery.first().getByRole('link', { name: key }).getAttribute('href')).toBe(`/console/traces/${encodeURIComponent(key)}`);
      await shot(page, 'webhook-deliveries');

      await row.getByTestId('delete-webhook').click();
      await row.getByTestId('delete-webhook-confirm').click();
      await expect.poll(() => row.count()).toBe(0);
      expect((await client.webhooks.list()).webhooks.map((webhook) => webhook.url)).not.toContain(url);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('sets the OTLP export with a header referencing a secret, shows it as stored, and deletes it', async () => {
    await client.secrets.create({ name: 'CONSOLE_OTLP', value: 'otlp-console-0123456789' });
    const endpoint = 'http://127.0.0.1:9/v1/traces';
    const page = await open('/console/webhooks', { expectedErrors });
    const section = page.getByTestId('otlp');
    await expect.poll(() => section.textContent()).toContain('Not set up.');

    await page.getByTestId('edit-otlp').click();
    await page.getByTestId('otlp-endpoint-input').fill(endpoint);
    await page.getByTestId('otlp-headers-input').fill('authorization: Bearer {{secret:CONSOLE_OTLP}}\nx-team: console');
    await page.getByTestId('otlp-payloads-input').check();
    await page.getByTestId('otlp-save').click();

    await expect.poll(() => page.getByTestId('otlp-endpoint').textContent()).toBe(endpoint);
    expect(await page.getByTestId('otlp-headers').textContent()).toBe('authorization: Bearer {{secret:CONSOLE_OTLP}}x-team: console');
    expect(await page.getByTestId('otlp-payloads').textContent()).toMatch(/^on/);
    expect(await page.content()).not.toContain('otlp-console-0123456789');
    expect(await client.integrations.otlp.get()).toEqual({ endpoint, headers: { authorization: 'Bearer {{secret:CONSOLE_OTLP}}', 'x-team': 'console' }, payloads: true });
    await shot(page, 'otlp-export');

    // A refused change shows the API's message and keeps the stored settings.
    await page.getByTestId('edit-otlp').click();
    await page.getByTestId('otlp-endpoint-input').fill('http://127.0.0.1:9/v1/logs');
    await page.getByTestId('otlp-save').click();
    await expect.poll(() => page.getByTestId('otlp-form').getByTestId('error').textContent()).toContain('(400)');
    await page.getByTestId('otlp-form').getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByTestId('otlp-endpoint').textContent()).toBe(endpoint);

    await page.getByTestId('delete-otlp').click();
    await page.getByTestId('delete-otlp-confirm').click();
    await expect.poll(() => section.textContent()).toContain('Not set up.');
    await expect(client.integrations.otlp.get()).rejects.toBeInstanceOf(NotFoundError);
    await client.secrets.delete('CONSOLE_OTLP');
  });
});
