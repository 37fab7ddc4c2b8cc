import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorFor } from '../../client/errors';
import type { TraceEvent } from '../../client/types';
import { describeError, EXIT, exitCodeFor, InterruptedError, InvocationFailedError } from '../../cli/errors';
import { InvocationState, liveTree, Screen } from '../../cli/live';
import { runCli, type Io } from '../../cli/main';
import { at, attemptEnded, attemptStarted, invocationEnded, spanEnded, spanStarted, startFakeTracesApi, type FakeEvent, type FakeTracesApi } from '../fakes/traces-api';

const model = { id: 'inv-1.att-1.1', type: 'model_call', name: 'gpt', startMs: 100 } as const;
const tool = { id: 'inv-1.att-1.2', parent: 'inv-1.att-1.1', type: 'tool_call', name: 'terminal', startMs: 600 } as const;
const second = { id: 'inv-1.att-1.3', type: 'model_call', name: 'gpt', startMs: 950 } as const;
/** One attempt: a model call, the tool call it requested, a second model call that answers. */
const script = [
  attemptStarted(1, 0),
  spanStarted(model),
  spanEnded(model, 500, 'SUCCEEDED', [10, 2]),
  spanStarted(tool),
  spanEnded(tool, 900),
  spanStarted(second),
  spanEnded(second, 990, 'SUCCEEDED', [5, 1]),
  attemptEnded(1, 0, 1000, [15, 3]),
  invocationEnded(1000, { answer: 'hi' }),
];
const finalTree = [
  'attempt #1  SUCCEEDED  1.0s  15 in / 3 out tokens',
  '  ├─ model_call  gpt  SUCCEEDED  400ms  10 in / 2 out tokens  [inv-1.att-1.1]',
  '  │  └─ tool_call  terminal  SUCCEEDED  300ms  [inv-1.att-1.2]',
  '  └─ model_call  gpt  SUCCEEDED  40ms  5 in / 1 out tokens  [inv-1.att-1.3]',
  'invocation  SUCCEEDED  1.0s  15 in / 3 out tokens',
];
const failed = invocationEnded(1000, { failure: { kind: 'crash', message: 'it died' } });
const RUN = ['run', 's', 'Say hi', '--agent-name', 'a', '--model', 'm', '--key', 'k'];

/** Streams and an interrupt source for one CLI run; `terminal` makes stderr a 100x40 terminal. */
function io(api: FakeTracesApi, { terminal = false } = {}) {
  const out = { stdout: '', stderr: '' };
  const interrupts = { handler: undefined as (() => void) | undefined, removed: 0 };
  const streams: Io = {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text), isTTY: terminal, columns: 100, rows: 40 },
    stdin: (async function* () {})(),
    env: { AGENT_SESSIONS_CONFIG: '/nonexistent/config.json', AGENT_SESSIONS_URL: api.url, AGENT_SESSIONS_TOKEN: 't' },
    onInterrupt(handler) {
      interrupts.handler = handler;
      return () => interrupts.removed++;
    },
  };
  return { out, streams, interrupts };
}

/** What a terminal shows last: the text after the last clear-to-end. */
const lastFrame = (text: string) => text.slice(text.lastIndexOf('\x1b[J') + 3);

describe('following from the command line', () => {
  let api: FakeTracesApi;
  beforeEach(async () => {
    api = await startFakeTracesApi();
  });
  afterEach(() => api.close());

  const posts = () => api.requests.filter((r) => r.method === 'POST');
  const eventRequests = () => api.requests.filter((r) => r.path.endsWith('/events'));
  /** Emits `events` once the run was accepted, the first half at once and the rest a moment later. */
  async function playOnceAccepted(events: FakeEvent[]) {
    await waitFor(() => posts().length > 0);
    api.emit('k', ...events.slice(0, 3));
    await new Promise((resolve) => setTimeout(resolve, 50));
    api.emit('k', ...events.slice(3));
  }

  it('run on a terminal: accepted first, then the spans drawn live as a tree while it re-attaches for the answer', async () => {
    const { out, streams } = io(api, { terminal: true });

    const [code] = await Promise.all([runCli(RUN, streams), playOnceAccepted(script)]);

    expect(code).toBe(0);
    expect(out.stdout).toBe('hi\n');
    const [tree, footer] = [lastFrame(out.stderr).split('\n').slice(0, -2), out.stderr.split('\n').at(-2)];
    expect(tree).toEqual(finalTree);
    expect(footer).toMatch(/^invocation k · session s · .* · trace: agent-sessions traces show k$/);
    expect(out.stderr).toMatch(/\x1b\[\d+F\x1b\[J/);
    const [accept, attach] = posts();
    expect(accept!.query).toEqual({ wait_timeout_seconds: '0' });
    expect(Number(attach!.query.wait_timeout_seconds)).toBeGreaterThan(1790);
    expect([attach!.headers['idempotency-key'], attach!.body]).toEqual([accept!.headers['idempotency-key'], accept!.body]);
  });

  it('run --json: each event as a JSON line, then the answer as the last line', async () => {
    const { out, streams } = io(api);

    const [code] = await Promise.all([runCli([...RUN, '--json'], streams), playOnceAccepted(script)]);

    const lines = out.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(code).toBe(0);
    expect(lines.slice(0, -1).map((event) => event.type)).toEqual(script.map((event) => event.type));
    expect(lines.at(-1)).toMatchObject({ invocation_key: 'k', session: { id: 's' }, message: { content: 'hi' } });
    expect(out.stderr).toBe('');
  });

  it('run elsewhere waits for the answer as before: one request, no events', async () => {
    const { out, streams } = io(api);

    const [code] = await Promise.all([runCli(RUN, streams), playOnceAccepted(script)]);

    expect(code).toBe(0);
    expect(out.stdout).toBe('hi\n');
    expect(posts().map((r) => r.query.wait_timeout_seconds)).toEqual(['1800']);
    expect(eventRequests()).toEqual([]);
  });

  it('run that fails exits 10 after drawing the failure', async () => {
    const { out, streams } = io(api, { terminal: true });

    const [code] = await Promise.all([runCli(RUN, streams), playOnceAccepted([...script.slice(0, 3), failed])]);

    expect(code).toBe(EXIT.runFailed);
    expect(out.stderr).toContain('invocation  FAILED  1.0s  10 in / 2 out tokens  crash: it died\n');
    expect(out.stderr).toMatch(/error: run failed \(crash\): it died\n/);
  });

  it('traces follow: the tree on stderr once it ends off a terminal, the answer on stdout, exit 0', async () => {
    api.emit('k', ...script);
    const { out, streams } = io(api);

    const code = await runCli(['traces', 'follow', 'k'], streams);

    expect(code).toBe(0);
    expect(out.stdout).toBe('hi\n');
    expect(out.stderr).toBe([...finalTree, 'invocation k · SUCCEEDED · trace: agent-sessions traces show k', ''].join('\n'));
  });

  it('traces follow --json: JSON lines of the events it knows; exit 10 with the failure when it failed', async () => {
    api.emit('k', script[0]!, { type: 'something_new', time: at(1) }, ...script.slice(1, 3), failed);
    const { out, streams } = io(api);

    const code = await runCli(['traces', 'follow', 'k', '--json'], streams);

    expect(code).toBe(EXIT.runFailed);
    const events = out.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as TraceEvent);
    expect(events.map((event) => event.type)).toEqual(['attempt_started', 'span_started', 'span_ended', 'invocation_ended']);
    expect(JSON.parse(out.stderr)).toEqual({ error: { invocation_key: 'k', kind: 'crash', message: 'it died', exit_code: 10 } });
  });

  it('Ctrl-C detaches: exit 130, the key and how to re-attach, the invocation left running', async () => {
    api.emit('k', script[0]!);
    const { out, streams, interrupts } = io(api, { terminal: true });

    const exit = runCli(['traces', 'follow', 'k'], streams);
    await waitFor(() => interrupts.handler !== undefined && eventRequests().length === 2);
    interrupts.handler!();

    expect(await exit).toBe(EXIT.interrupted);
    expect(out.stderr).toMatch(/detached from invocation k: it goes on in the service\.\nRe-attach with "agent-sessions traces follow k", or stop it with "agent-sessions traces cancel k"\.\n$/);
    expect(posts()).toEqual([]);
    expect(interrupts.removed).toBe(1);
  });

  it('Ctrl-C during a run with --cancel-on-interrupt cancels it first', async () => {
    const { out, streams, interrupts } = io(api, { terminal: true });

    const exit = runCli([...RUN, '--cancel-on-interrupt', '--json'], streams);
    await waitFor(() => posts().length === 2 && eventRequests().length > 0);
    interrupts.handler!();

    expect(await exit).toBe(EXIT.interrupted);
    expect(posts().map((r) => r.path)).toEqual(['/sessions/s', '/sessions/s', '/traces/k/cancel']);
    expect(JSON.parse(out.stderr)).toEqual({
      error: { invocation_key: 'k', cancelled: true, message: 'cancelled invocation k (interrupted: cancelled through the API).', exit_code: 130 },
    });
  });

  it('traces cancel prints the cancelled invocation; one that ended otherwise exits 7', async () => {
    api.emit('k', script[0]!);
    api.emit('done', ...script);
    const cancelled = io(api);
    const conflict = io(api);

    expect(await runCli(['traces', 'cancel', 'k'], cancelled.streams)).toBe(0);
    expect(await runCli(['traces', 'cancel', 'done'], conflict.streams)).toBe(EXIT.conflict);
    expect(cancelled.out.stdout).toBe(
      ['cancelled: k', 'status:    FAILED', 'failure:   interrupted: cancelled through the API', 'tokens:    10 in / 2 out', ''].join('\n'),
    );
    expect(conflict.out.stderr).toBe('error: conflict: invocation done already ended SUCCEEDED\n');
  });

  it('traces list shows tokens, and a cost column when the service priced an invocation', async () => {
    const trace = { session_id: 's', status: 'SUCCEEDED', spans_expired: false, started_at: at(0), ended_at: at(1500), usage: { input_tokens: 120, output_tokens: 30 } };
    api.listPage = { traces: [{ ...trace, invocation_key: 'a', cost_usd: 0.00123 }, { ...trace, invocation_key: 'b' }] };
    const priced = io(api);
    await runCli(['traces', 'list'], priced.streams);
    api.listPage = { traces: [{ ...trace, invocation_key: 'b' }] };
    const unpriced = io(api);
    await runCli(['traces', 'list'], unpriced.streams);

    expect(priced.out.stdout.split('\n').slice(0, 3)).toEqual([
      'INVOCATION  SESSION  AGENT  STATUS     STARTED                   DURATION  TOKENS IN/OUT  COST',
      'a           s        -      SUCCEEDED  2026-01-01T00:00:00.000Z  1.5s      120/30         $0.0012',
      'b           s        -      SUCCEEDED  2026-01-01T00:00:00.000Z  1.5s      120/30         -',
    ]);
    expect(unpriced.out.stdout).toMatch(/DURATION {2}TOKENS IN\/OUT\n/);
  });
});

describe('the live tree', () => {
  const state = (...events: FakeEvent[]) => {
    const followed = new InvocationState();
    for (const event of events) followed.apply(event as unknown as TraceEvent);
    return followed;
  };

  it('times running spans to now, adds up a running attempt from its ended spans, and says when nothing started yet', () => {
    const now = Date.parse(at(2000));

    expect(liveTree(state(), now)).toEqual(['waiting for the invocation to start']);
    expect(liveTree(state(...script.slice(0, 4)), now)).toEqual([
      'attempt #1  RUNNING  2.0s  10 in / 2 out tokens',
      '  └─ model_call  gpt  SUCCEEDED  400ms  10 in / 2 out tokens  [inv-1.att-1.1]',
      '     └─ tool_call  terminal  RUNNING  1.4s  [inv-1.att-1.2]',
    ]);
  });

  it('keeps each attempt\'s spans under it, and names an attempt it only knows from its spans', () => {
    const retry = { id: 'inv-1.att-2.4', type: 'model_call', name: 'gpt', startMs: 1200 } as const;

    const lines = liveTree(state(spanStarted(model), spanEnded(model, 500, 'FAILED'), spanStarted(retry)), Date.parse(at(1500)));

    expect(lines).toEqual([
      'attempt #1',
      '  └─ model_call  gpt  FAILED  400ms  [inv-1.att-1.1]',
      'attempt #2',
      '  └─ model_call  gpt  RUNNING  300ms  [inv-1.att-2.4]',
    ]);
  });

  it('redraws in place, cuts lines to the terminal\'s width, and leaves behind lines that no longer fit its height', () => {
    const written: string[] = [];
    const screen = new Screen({ write: (text: string) => written.push(text), isTTY: true, columns: 12, rows: 3 });

    screen.draw(['one']);
    screen.draw(['one', 'two']);
    screen.draw(['one', 'two', 'three is a long line']);
    screen.draw(['one', 'two', 'three', 'four']);

    expect(written).toEqual(['\r\x1b[Jone\n', '\x1b[1F\x1b[Jone\ntwo\n', '\x1b[2F\x1b[Jone\ntwo\nthree is a…\n', '\x1b[2F\x1b[Jtwo\nthree\nfour\n']);
  });
});

describe('what the CLI says after following', () => {
  it('gives Ctrl-C, a failed followed invocation and a cancel that came too late their codes and words', () => {
    const conflict = errorFor(409, { message: 'invocation k already ended SUCCEEDED', status: 'SUCCEEDED' }, new Headers());

    expect(exitCodeFor(new InterruptedError('k', 'detached', 'hint'))).toBe(130);
    expect(describeError(new InterruptedError('k', 'detached', 'hint'))).toBe('detached\nhint');
    expect(exitCodeFor(new InvocationFailedError('k', { kind: 'crash', message: 'it died' }))).toBe(EXIT.runFailed);
    expect(describeError(new InvocationFailedError('k', { kind: 'crash', message: 'it died' }))).toBe('invocation k failed (crash): it died\nRead it with "agent-sessions traces show k".');
    expect(describeError(conflict)).toBe('conflict: invocation k already ended SUCCEEDED');
  });
});

/** Resolves once `condition` holds (checked every 10 ms, for up to 5 s). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
