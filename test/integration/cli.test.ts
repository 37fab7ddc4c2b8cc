import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, delay, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { baseUrl, newOrganization, uniqueEmail } from './support';

// The CLI as a user runs it: the bin shim in a child process, against the local service.
const BIN = fileURLToPath(new URL('../../bin/agent-sessions.js', import.meta.url));

let dir: string;
let model: FakeOpenAIServer;
let email: string;
let login: Result;

// Every test runs as this signed-in admin of a new organization, through the profile file.
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-sessions-cli-'));
  model = await startFakeOpenAI();
  email = (await newOrganization()).email;
  login = await cli(['login', email]);
});

afterAll(async () => {
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `agent-sessions ...args` with its profile file in the test's directory. */
function cli(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH, HOME: dir, AGENT_SESSIONS_CONFIG: join(dir, 'config.json'), AGENT_SESSIONS_URL: baseUrl(), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const modelFlags = () => ['--agent-name', 'greeter', '--model', 'gpt-fake', '--provider-url', model.url];

describe('agent-sessions', () => {
  it('signs in, keeps the token in a 0600 profile file, and says who it is', async () => {
    const file = join(dir, 'config.json');
    const whoami = await cli(['whoami']);
    const whoamiJson = await cli(['whoami', '--json']);
    const health = await cli(['health']);

    expect(login).toMatchObject({ code: 0, stderr: '' });
    expect(login.stdout).toContain(`Signed in as ${email} (admin)`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).profiles.default).toEqual({ url: baseUrl(), token: expect.stringMatching(/^ey/) });
    expect(whoami.stdout).toMatch(new RegExp(`^user ${email} \\(admin`));
    expect(JSON.parse(whoamiJson.stdout)).toMatchObject({ kind: 'user', user: { email } });
    expect(health).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  it('runs an agent and reads the session, the audit log and the trace as a tree', async () => {
    const secret = await cli(['secrets', 'create', 'MODEL_KEY'], { stdin: 'sk-from-stdin-0123456789\n' });
    // `lookup` is no tool of this agent: its call fails and the model answers after it.
    model.enqueue(toolCall('lookup', { q: 'x' }), answer('Hello in five words, friend'));
    const run = await cli(['run', 'walk', 'Say hello', ...modelFlags(), '--key', 'walk-1']);
    const tree = await cli(['traces', 'show', 'walk-1']);
    const traceJson = JSON.parse((await cli(['traces', 'show', 'walk-1', '--json', '--payloads'])).stdout);
    const traces = JSON.parse((await cli(['traces', 'list', '--json'])).stdout);
    const transcript = await cli(['sessions', 'show', 'walk']);
    const sessions = await cli(['sessions']);
    const audit = JSON.parse((await cli(['sessions', 'audit', 'walk', '--limit', '2', '--all', '--json'])).stdout);
    const agents = await cli(['agents']);

    expect(secret.stdout).toContain('Stored MODEL_KEY (****6789)');
    expect(run).toMatchObject({ code: 0, stdout: 'Hello in five words, friend\n' });
    // No spinner without a terminal: stderr holds only the footer.
    expect(run.stderr).toMatch(/^invocation walk-1 · session walk · .* · trace: agent-sessions traces show walk-1\n$/);
    expect(tree.code).toBe(0);
    expect(tree.stdout).toMatch(/^trace: +walk-1$/m);
    expect(tree.stdout).toMatch(/^ {2}├─ model_call {2}gpt-fake {2}SUCCEEDED .*\[inv-1\.att-1\.1\]$/m);
    expect(tree.stdout).toMatch(/^ {2}│ {2}└─ tool_call {2}lookup {2}FAILED .*\[inv-1\.att-1\.2\]$/m);
    expect(tree.stdout).toMatch(/^ {2}└─ model_call {2}gpt-fake .*\[inv-1\.att-1\.3\]$/m);
    expect(traceJson.spans.map((s: { id: string }) => s.id)).toEqual(['inv-1.att-1.1', 'inv-1.att-1.2', 'inv-1.att-1.3']);
    expect(traceJson.spans[0]).toHaveProperty('input');
    expect(traceJson.next_cursor).toBeUndefined();
    expect(traces.traces.map((t: { invocation_key: string }) => t.invocation_key)).toContain('walk-1');
    expect(transcript.stdout).toContain('session:     walk');
    expect(transcript.stdout).toMatch(/\[1\] user · .* · walk-1\n {4}Say hello/);
    expect(transcript.stdout).toMatch(/\[2\] assistant · .*\n {4}Hello in five words, friend/);
    expect(sessions.stdout).toMatch(/^ID +STATE +INVOCATIONS +AGENT +UPDATED\nwalk +IDLE +1 +greeter /);
    expect(audit.next_cursor).toBeUndefined();
    expect(audit.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['agent_invocation', 'llm_call', 'tool_result', 'run_succeeded']));
    expect(agents.stdout).toMatch(/^NAME +REVISIONS .*\ngreeter +1 /);
  });

  it('reads the prompt from stdin and pages through messages with --limit, --after and --all', async () => {
    model.enqueue(answer('one'), answer('two'));
    await cli(['run', 'paged', ...modelFlags()], { stdin: 'first prompt\n' });
    await cli(['run', 'paged', '-', ...modelFlags()], { stdin: 'second prompt' });

    const page = await cli(['sessions', 'show', 'paged', '--limit', '1', '--json']);
    const human = await cli(['sessions', 'show', 'paged', '--limit', '3']);
    const next = JSON.parse((await cli(['sessions', 'show', 'paged', '--limit', '3', '--after', '3', '--json'])).stdout);
    const all = JSON.parse((await cli(['sessions', 'show', 'paged', '--limit', '1', '--all', '--json'])).stdout);

    expect(JSON.parse(page.stdout)).toMatchObject({ messages: [{ content: 'first prompt' }], next_cursor: '1' });
    expect(page.stderr).toBe('');
    expect(human.stderr).toBe('more: add --after 3 (or --all)\n');
    expect(next.messages.map((m: { content: string }) => m.content)).toEqual(['two']);
    expect(all.messages.map((m: { content: string }) => m.content)).toEqual(['first prompt', 'one', 'second prompt', 'two']);
    expect(all).not.toHaveProperty('next_cursor');
  });

  it('exits with a documented code and a clear message for each failure', async () => {
    const notFound = await cli(['sessions', 'show', 'no-such-session']);
    const notFoundJson = await cli(['sessions', 'show', 'no-such-session', '--json']);
    const badInput = await cli(['traces', 'list', '--since', '2030-01-02T00:00:00Z', '--until', '2030-01-01T00:00:00Z']);
    const badToken = await cli(['whoami', '--token', 'not-a-token']);
    const usage = await cli(['run', 'x', 'prompt', '--model', 'm']);
    const unknown = await cli(['frobnicate']);
    const unreachable = await cli(['health', '--url', `http://127.0.0.1:${await closedPort()}`]);
    model.enqueue(toolCall('lookup', {}));
    const failed = await cli(['run', 'failing', 'Go', ...modelFlags(), '--max-steps', '1', '--key', 'fail-1']);
    const conflict = await cli(['run', 'failing', 'Other prompt', ...modelFlags(), '--key', 'fail-1']);

    expect(notFound.code).toBe(6);
    expect(notFound.stderr).toBe('error: not found: session no-such-session not found\n');
    expect(JSON.parse(notFoundJson.stderr)).toEqual({ error: { message: 'session no-such-session not found', status: 404, exit_code: 6 } });
    expect(badInput.code).toBe(3);
    expect(badInput.stderr).toMatch(/^error: invalid request: /);
    expect(badToken.code).toBe(4);
    expect(badToken.stderr).toContain('agent-sessions login');
    expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining('--agent-name is required') });
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "frobnicate"') });
    expect(unreachable.code).toBe(13);
    expect(unreachable.stderr).toContain('cannot reach');
    expect(failed.code).toBe(10);
    expect(failed.stderr).toMatch(/^error: run failed \(interrupted\): /);
    expect(conflict.code).toBe(7);
  });

  it('exits 12 when the wait ends first, 8 while that run holds the session, and re-attaches with the key', async () => {
    // Long enough for the next CLI process to start while it runs, short of the 6 s attempt timeout.
    model.enqueue(delay(4500, answer('Slow answer')));
    const waited = await cli(['run', 'slow', 'Take time', ...modelFlags(), '--key', 'slow-1', '--wait', '1']);
    const busy = await cli(['run', 'slow', 'Meanwhile', ...modelFlags(), '--key', 'slow-2', '--wait', '0']);
    const attached = await cli(['run', 'slow', 'Take time', ...modelFlags(), '--key', 'slow-1']);

    expect(waited.code).toBe(12);
    expect(waited.stderr).toContain('Re-attach with --key slow-1');
    expect(busy.code).toBe(8);
    expect(busy.stderr).toMatch(/^error: session busy: /);
    expect(attached).toMatchObject({ code: 0, stdout: 'Slow answer\n' });
  });

  it('answers 403 not_provisioned to an account outside the beta with exit 5, and saves nothing', async () => {
    const config = join(dir, 'outsider.json');

    const outsider = await cli(['login', uniqueEmail('outsider')], { env: { AGENT_SESSIONS_CONFIG: config } });

    expect(outsider.code).toBe(5);
    expect(outsider.stderr).toContain('not in the private beta');
    await expect(stat(config)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps profiles apart, sends a profile\'s token only to its own URL, and logs out', async () => {
    const env = { AGENT_SESSIONS_CONFIG: join(dir, 'profiles.json') };
    await cli(['login', email, '--profile', 'work'], { env });
    const key = await cli(['tokens', 'create', 'scripts', '--profile', 'work', '--save'], { env });
    const asKey = await cli(['whoami', '--profile', 'work'], { env });
    const keyOnTokens = await cli(['tokens', 'list', '--profile', 'work'], { env });
    const otherHost = await cli(['whoami', '--profile', 'work'], { env: { ...env, AGENT_SESSIONS_URL: baseUrl().replace('127.0.0.1', 'localhost') } });
    const missing = await cli(['whoami', '--profile', 'nope'], { env });
    await cli(['logout', '--profile', 'work'], { env });
    const loggedOut = await cli(['whoami', '--profile', 'work'], { env });

    expect(key.stdout).toMatch(/^\S+\n$/);
    expect(key.stderr).toContain('shown only once; saved to the profile');
    expect(asKey.stdout).toMatch(/^API key "scripts"/);
    expect(keyOnTokens.code).toBe(4);
    expect(otherHost.code).toBe(4);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('no profile "nope"') });
    expect(loggedOut.code).toBe(4);
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

describe('agent-sessions webhooks and integrations', () => {
  it('creates a webhook showing its secret once, lists it and its deliveries, and deletes it', async () => {
    // Nothing runs in the organization while it exists: the closed port is never called.
    const url = `http://127.0.0.1:${await closedPort()}/cli-hooks`;

    const created = await cli(['webhooks', 'create', url, '--events', 'invocation.failed']);
    const id = /^Webhook (\S+) for /.exec(created.stderr)?.[1] ?? '';
    const list = await cli(['webhooks']);
    const listJson = JSON.parse((await cli(['webhooks', 'list', '--json'])).stdout);
    const show = await cli(['webhooks', 'show', id]);
    const deliveries = await cli(['webhooks', 'deliveries', id]);
    const deliveriesJson = JSON.parse((await cli(['webhooks', 'deliveries', id, '--limit', '5', '--all', '--json'])).stdout);
    const refused = await cli(['webhooks', 'create', 'http://169.254.169.254/latest/meta-data']);
    const deleted = await cli(['webhooks', 'delete', id]);
    const gone = await cli(['webhooks', 'deliveries', id]);

    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^whsec_\S+\n$/);
    expect(created.stderr).toBe(`Webhook ${id} for ${url} (invocation.failed).\nIts signing secret (above) is shown only once: it will not be shown again.\n`);
    expect(list.stdout).toMatch(new RegExp(`^ID +URL +EVENTS +CREATED\\n${id} +${url} +invocation\\.failed +\\d{4}-`));
    expect(listJson).toEqual({ webhooks: [{ id, url, events: ['invocation.failed'], created_at: expect.any(String) }] });
    expect(show.stdout).toContain(`url:     ${url}\n`);
    for (const output of [list.stdout, JSON.stringify(listJson), show.stdout]) expect(output).not.toContain(created.stdout.trim());
    expect(deliveries).toMatchObject({ code: 0, stdout: '(none)\n', stderr: '' });
    expect(deliveriesJson).toEqual({ deliveries: [] });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^error: invalid request: /);
    expect(deleted).toMatchObject({ code: 0, stdout: `Deleted webhook ${id}\n` });
    expect(gone).toMatchObject({ code: 6, stderr: expect.stringMatching(/^error: not found: /) });
  });

  it('sets the OTLP export with a header referencing a secret, shows it as stored, and deletes it', async () => {
    await cli(['secrets', 'create', 'OTLP_TOKEN', '--value', 'otlp-cli-0123456789']);
    const endpoint = `http://127.0.0.1:${await closedPort()}/v1/traces`;

    const set = await cli(['integrations', 'otlp', 'set', '--endpoint', endpoint, '--header', 'authorization=Bearer {{secret:OTLP_TOKEN}}', '--payloads']);
    const show = await cli(['integrations', 'otlp', 'show']);
    const showJson = JSON.parse((await cli(['integrations', 'otlp', 'show', '--json'])).stdout);
    const wrongPath = await cli(['integrations', 'otlp', 'set', '--endpoint', endpoint.replace('/v1/traces', '/v1/logs')]);
    const deleted = await cli(['integrations', 'otlp', 'delete']);
    const none = await cli(['integrations', 'otlp', 'show']);
    await cli(['secrets', 'delete', 'OTLP_TOKEN']);

    expect(set.code).toBe(0);
    expect(set.stdout).toBe(`Exporting finished invocations:\n${show.stdout}`);
    expect(show.stdout).toBe(`endpoint: ${endpoint}\npayloads: on\nheader:   authorization: Bearer {{secret:OTLP_TOKEN}}\n`);
    expect(showJson).toEqual({ endpoint, headers: { authorization: 'Bearer {{secret:OTLP_TOKEN}}' }, payloads: true });
    expect(wrongPath.code).toBe(3);
    expect(deleted).toMatchObject({ code: 0, stdout: 'Stopped the OTLP export\n' });
    expect(none.code).toBe(6);
  });
});
