import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APIConnectionError, APIConnectionTimeoutError, errorFor, InvalidArgumentError } from '../../client/errors';
import type { Span, TraceGetResponse } from '../../client/types';
import { ConfigError, configPath, resolveSettings, saveProfile } from '../../cli/config';
import { describeError, EXIT, EXIT_CODE_HELP, exitCodeFor, UsageError } from '../../cli/errors';
import { runCli, type Io } from '../../cli/main';
import { duration, table, traceTree, usd } from '../../cli/render';
import { startSpinner } from '../../cli/spinner';

describe('exit codes and messages', () => {
  const api = (status: number, body: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    errorFor(status, { message: 'the message', ...body }, new Headers(headers));

  it.each([
    [400, EXIT.badRequest, /^invalid request: the message$/],
    [401, EXIT.unauthenticated, /^not authenticated: the message\n.*agent-sessions login/],
    [403, EXIT.forbidden, /^not allowed: the message$/],
    [404, EXIT.notFound, /^not found: the message$/],
    [409, EXIT.conflict, /^conflict: .*new --key/s],
    [423, EXIT.sessionBusy, /^session busy: .*--key to attach/s],
    [429, EXIT.quotaExceeded, /^quota exceeded: .*operator/s],
    [500, EXIT.failure, /^service error: the message$/],
    [502, EXIT.runFailed, /^run failed \(unknown\): .*new --key/s],
    [503, EXIT.unavailable, /^service unavailable: the message\nTry again later\.$/],
    [504, EXIT.stillRunning, /^still running: /],
  ])('%i exits %i with a message that says what to do', (status, code, message) => {
    const error = api(status);

    expect(exitCodeFor(error)).toBe(code);
    expect(describeError(error)).toMatch(message);
  });

  it('names the beta, the failure kind, the request id, the wait and the key where the body gives them', () => {
    expect(describeError(api(403, { code: 'not_provisioned' }))).toMatch(/^this account is not in the private beta \(not_provisioned\)/);
    expect(describeError(api(502, { kind: 'no_progress' }))).toMatch(/^run failed \(no_progress\)/);
    expect(describeError(api(500, { request_id: 'req-1' }))).toBe('service error (request id req-1): the message');
    expect(describeError(api(503, {}, { 'retry-after': '5' }))).toContain('Try again in 5 s.');
    expect(describeError(api(504, { invocation_key: 'k-1' }))).toContain('Re-attach with --key k-1');
  });

  it('gives usage, configuration and connection failures codes of their own', () => {
    expect(exitCodeFor(new UsageError('x'))).toBe(EXIT.usage);
    expect(exitCodeFor(new ConfigError('x'))).toBe(EXIT.usage);
    expect(exitCodeFor(new InvalidArgumentError('x'))).toBe(EXIT.usage);
    expect(exitCodeFor(new APIConnectionError('cannot reach', false))).toBe(EXIT.unreachable);
    expect(exitCodeFor(new APIConnectionTimeoutError('no answer', true))).toBe(EXIT.unreachable);
    expect(exitCodeFor(new Error('boom'))).toBe(EXIT.failure);
    expect(describeError(new APIConnectionError('cannot reach http://x', false))).toContain('AGENT_SESSIONS_URL');
  });

  it('documents every exit code once', () => {
    expect(EXIT_CODE_HELP.map(([code]) => code)).toEqual(Object.values(EXIT));
  });
});

describe('rendering', () => {
  it('aligns a table, cuts long cells and shows absent values as -', () => {
    const text = table(
      [
        { id: 'a', note: 'x'.repeat(10), n: 1 },
        { id: 'longer-id', note: undefined, n: 22 },
      ],
      [
        { header: 'id', value: (r) => r.id },
        { header: 'note', value: (r) => r.note, max: 5 },
        { header: 'n', value: (r) => r.n },
      ],
    );

    expect(text).toBe('ID         NOTE   N\na          xxxx…  1\nlonger-id  -      22\n');
    expect(table([], [{ header: 'id', value: () => 'x' }])).toBe('(none)\n');
  });

  it('formats durations and costs for people', () => {
    expect([duration(850), duration(12_340), duration(245_000)]).toEqual(['850ms', '12.3s', '4m 05s']);
    expect([usd(0.00123), usd(12.345), usd(undefined)]).toEqual(['$0.0012', '$12.35', undefined]);
  });

  const trace: Omit<TraceGetResponse, 'spans' | 'next_cursor'> = {
    invocation_key: 'k',
    session_id: 's',
    agent_name: 'a',
    agent_revision: '0123456789abcdef',
    status: 'SUCCEEDED',
    spans_expired: false,
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:00:02.000Z',
    session_position: 2,
    usage: { input_tokens: 30, output_tokens: 5 },
    cost_usd: 0.0012,
    attempts: [{ number: 1, status: 'SUCCEEDED', started_at: '2026-01-01T00:00:00.000Z', ended_at: '2026-01-01T00:00:02.000Z', usage: { input_tokens: 30, output_tokens: 5 } }],
  };
  const span = (id: string, parent: string | null, type: Span['type'], name: string, extra: Partial<Span> = {}): Span => ({
    id,
    parent_id: parent,
    type,
    name,
    status: 'SUCCEEDED',
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:00:00.500Z',
    usage: type === 'model_call' ? { input_tokens: 10, output_tokens: 2 } : null,
    ...extra,
  });

  it('draws the spans as a tree: tool calls under the model call that requested them', () => {
    const spans = [
      span('inv-2.att-1.1', null, 'model_call', 'gpt'),
      span('inv-2.att-1.2', 'inv-2.att-1.1', 'tool_call', 'terminal'),
      span('inv-2.att-1.3', 'inv-2.att-1.1', 'tool_call', 'web_search', { status: 'FAILED' }),
      span('inv-2.att-1.4', null, 'model_call', 'gpt'),
    ];

    expect(traceTree(trace, spans)).toBe(
      [
        'trace:    k',
        'status:   SUCCEEDED',
        'session:  s (invocation 2)',
        'agent:    a (revision 0123456789abcdef)',
        'started:  2026-01-01T00:00:00.000Z',
        'duration: 2.0s',
        'tokens:   30 in / 5 out',
        'cost:     $0.0012',
        'attempts:',
        '  #1  SUCCEEDED  2.0s  30 in / 5 out tokens',
        'spans:',
        '  ├─ model_call  gpt  SUCCEEDED  500ms  10 in / 2 out tokens  [inv-2.att-1.1]',
        '  │  ├─ tool_call  terminal  SUCCEEDED  500ms  [inv-2.att-1.2]',
        '  │  └─ tool_call  web_search  FAILED  500ms  [inv-2.att-1.3]',
        '  └─ model_call  gpt  SUCCEEDED  500ms  10 in / 2 out tokens  [inv-2.att-1.4]',
        '',
      ].join('\n'),
    );
  });

  it('shows payloads under their span, marks superseded spans, and roots a span whose parent is on no page', () => {
    const spans = [
      span('inv-1.att-1.1', null, 'model_call', 'gpt', { superseded: true, input: { messages: ['hi'] }, output: 'x'.repeat(300) }),
      span('inv-1.att-2.2', 'inv-1.att-2.1', 'tool_call', 'terminal', { ended_at: null, status: 'RUNNING' }),
    ];

    const text = traceTree({ ...trace, status: 'RUNNING', ended_at: undefined, failure: undefined }, spans, { width: 60 });

    expect(text).toContain('  ├─ model_call  gpt  SUCCEEDED  500ms  10 in / 2 out tokens  (superseded)  [inv-1.att-1.1]\n  │    in:  {"messages":["hi"]}\n  │    out: xxx');
    expect(text).toMatch(/out: x+…\n/);
    expect(text).toContain('  └─ tool_call  terminal  RUNNING  running  [inv-1.att-2.2]');
    expect(text).toContain('duration: running');
  });

  it('says when spans expired, and keeps the failure', () => {
    const text = traceTree({ ...trace, status: 'FAILED', spans_expired: true, attempts: undefined, failure: { kind: 'crash', message: 'it died' } }, []);

    expect(text).toContain('failure:  crash: it died');
    expect(text).toMatch(/spans: expired .*\n$/);
  });
});

describe('the spinner', () => {
  it('draws elapsed time on a terminal and erases itself; draws nothing elsewhere', () => {
    const written: string[] = [];
    let now = 0;
    const stop = startSpinner({ isTTY: true, write: (text: string) => written.push(text) }, 'running s', () => now);
    now = 1500;
    stop();
    const silent: string[] = [];
    startSpinner({ isTTY: false, write: (text: string) => silent.push(text) }, 'running s')();

    expect(written[0]).toBe('\r\x1b[K⠋ running s 0ms');
    expect(written.at(-1)).toBe('\r\x1b[K');
    expect(silent).toEqual([]);
  });
});

describe('configuration', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-config-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('finds the profile file by override, then XDG_CONFIG_HOME, then HOME', () => {
    expect(configPath({ AGENT_SESSIONS_CONFIG: '/x/c.json', XDG_CONFIG_HOME: '/xdg', HOME: '/h' })).toBe('/x/c.json');
    expect(configPath({ XDG_CONFIG_HOME: '/xdg', HOME: '/h' })).toBe('/xdg/agent-sessions/config.json');
    expect(configPath({ HOME: '/h' })).toBe('/h/.config/agent-sessions/config.json');
  });

  it('writes profiles 0600, keeps the others, and clears a field set to undefined', async () => {
    const file = join(dir, 'nested', 'config.json');
    await saveProfile(file, 'default', { url: 'http://a.test', token: 'one' });
    await saveProfile(file, 'work', { url: 'http://b.test', token: 'two' });
    await saveProfile(file, 'default', { token: undefined });

    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ profiles: { default: { url: 'http://a.test' }, work: { url: 'http://b.test', token: 'two' } } });
  });

  it('takes flags over the environment over the profile, and the profile token only for its own URL', async () => {
    const file = join(dir, 'config.json');
    await saveProfile(file, 'default', { url: 'http://profile.test/', token: 'profile-token' });
    const env = { AGENT_SESSIONS_CONFIG: file };

    expect(await resolveSettings({}, env)).toMatchObject({ url: 'http://profile.test', token: 'profile-token', profile: 'default' });
    expect(await resolveSettings({}, { ...env, AGENT_SESSIONS_TOKEN: 'env-token' })).toMatchObject({ token: 'env-token' });
    expect(await resolveSettings({ token: 'flag-token' }, { ...env, AGENT_SESSIONS_TOKEN: 'env-token' })).toMatchObject({ token: 'flag-token' });
    expect(await resolveSettings({}, { ...env, AGENT_SESSIONS_URL: 'http://elsewhere.test' })).toMatchObject({ url: 'http://elsewhere.test', token: undefined });
    expect(await resolveSettings({}, { AGENT_SESSIONS_CONFIG: join(dir, 'none.json') })).toMatchObject({ url: 'http://127.0.0.1:3000', token: undefined });
  });

  it('refuses an unknown named profile, a malformed file and a URL that is not http(s)', async () => {
    const file = join(dir, 'config.json');
    await writeFile(file, '{not json');

    await expect(resolveSettings({ profile: 'x' }, { AGENT_SESSIONS_CONFIG: join(dir, 'none.json') })).rejects.toThrow(/no profile "x"/);
    await expect(resolveSettings({}, { AGENT_SESSIONS_CONFIG: file })).rejects.toThrow(/not a valid profile file/);
    await expect(resolveSettings({ url: 'ftp://x' }, { AGENT_SESSIONS_CONFIG: join(dir, 'none.json') })).rejects.toThrow(ConfigError);
  });
});

describe('the command line', () => {
  function io(env: NodeJS.ProcessEnv = {}) {
    const out = { stdout: '', stderr: '' };
    const streams: Io = {
      stdout: { write: (text: string) => (out.stdout += text) },
      stderr: { write: (text: string) => (out.stderr += text) },
      stdin: (async function* () {})(),
      env: { AGENT_SESSIONS_CONFIG: '/nonexistent/config.json', ...env },
    };
    return { out, streams };
  }

  it('prints help with the commands and exit codes, and a command\'s own help', async () => {
    const main = io();
    const command = io();

    expect(await runCli(['--help'], main.streams)).toBe(0);
    expect(await runCli(['traces', 'show', '--help'], command.streams)).toBe(0);
    expect(main.out.stdout).toContain('run <session-id> [prompt]');
    expect(main.out.stdout).toContain('   12  504: the wait ended and the run goes on; re-attach with the same --key');
    expect(main.out.stdout).toContain('  130  Ctrl-C while following an invocation: it goes on unless --cancel-on-interrupt');
    expect(main.out.stdout).toContain('traces follow <invocation-key>');
    expect(main.out.stdout).toContain('traces cancel <invocation-key>');
    expect(command.out.stdout).toMatch(/^usage: agent-sessions traces show <invocation-key> \[options\]/);
    expect(command.out.stdout).toContain('--payloads');
  });

  it.each([
    [[], /agent-sessions: the Agent Session Service/],
    [['nope'], /unknown command "nope"/],
    [['invites'], /"invites" needs a subcommand: invites create/],
    [['sessions', 'show'], /usage: agent-sessions sessions show <session-id>/],
    [['sessions', 'list', '--bogus'], /sessions list: Unknown option '--bogus'/],
    [['sessions', 'list', '--limit', 'ten'], /--limit must be a whole number from 1 to 1000, not "ten"/],
    [['run', 's', 'p', '--agent-name', 'a'], /give the model: --model NAME/],
    [['run', 's', 'p', '--agent-name', 'a', '--agent', '{"model": '], /--agent: /],
    [['run', 's', 'p', '--agent-name', 'a', '--model', 'm', '--wait', '1801'], /--wait must be a whole number from 0 to 1800/],
    [['traces', 'list', '--status', 'DONE'], /--status must be RUNNING, SUCCEEDED or FAILED/],
  ])('exits 2 for bad usage: %j', async (argv, message) => {
    const { out, streams } = io();

    expect(await runCli(argv, streams)).toBe(EXIT.usage);
    expect(out.stderr).toMatch(message);
  });

  it('takes global options before the command too, and reports errors as JSON with --json', async () => {
    const { out, streams } = io();

    expect(await runCli(['--json', '--url', 'ftp://x', 'sessions', 'list'], streams)).toBe(EXIT.usage);
    expect(JSON.parse(out.stderr)).toEqual({ error: { message: '"ftp://x" is not an http(s) URL', exit_code: 2 } });
  });
});
