/** Traces: the search over invocations, one invocation as a span tree, following and cancelling one. */
import type { Span, TraceSummary } from '../../client/types';
import { InvocationFailedError, UsageError } from '../errors';
import { FOLLOW_OPTIONS, interruptible, showEvents } from '../follow';
import { duration, fields, table, tokens, traceTree, usd, type Column } from '../render';
import { intOption, output, PAGE_OPTIONS, showList, stringOption, write, type Command } from './shared';

/** The columns of `traces list`; cost only when the service priced some invocation of the page. */
function listColumns(traces: readonly TraceSummary[]): Column<TraceSummary>[] {
  return [
    { header: 'invocation', value: (t) => t.invocation_key, max: 40 },
    { header: 'session', value: (t) => t.session_id, max: 30 },
    { header: 'agent', value: (t) => t.agent_name, max: 24 },
    { header: 'status', value: (t) => t.status },
    { header: 'started', value: (t) => t.started_at },
    { header: 'duration', value: (t) => (t.ended_at ? duration(Date.parse(t.ended_at) - Date.parse(t.started_at)) : 'running') },
    { header: 'tokens in/out', value: (t) => t.usage && `${t.usage.input_tokens}/${t.usage.output_tokens}` },
    ...(traces.some((t) => t.cost_usd !== undefined) ? [{ header: 'cost', value: (t: TraceSummary) => usd(t.cost_usd) }] : []),
  ];
}

export const traceCommands: Command[] = [
  {
    name: 'traces list',
    summary: 'invocations, newest first (default window: the last 31 days)',
    options: {
      'agent-name': { type: 'string', value: 'NAME', help: 'only this agent' },
      'agent-revision': { type: 'string', value: 'REVISION', help: 'only this revision' },
      status: { type: 'string', value: 'STATUS', help: 'RUNNING, SUCCEEDED or FAILED' },
      session: { type: 'string', value: 'ID', help: 'only this session' },
      since: { type: 'string', value: 'TIME', help: 'started at or after (ISO 8601)' },
      until: { type: 'string', value: 'TIME', help: 'started at or before (ISO 8601)' },
      ...PAGE_OPTIONS,
    },
    async run(context) {
      const status = stringOption(context, 'status');
      if (status !== undefined && !['RUNNING', 'SUCCEEDED', 'FAILED'].includes(status)) throw new UsageError(`--status must be RUNNING, SUCCEEDED or FAILED, not "${status}"`);
      const list = (await context.client()).traces.list({
        agent_name: stringOption(context, 'agent-name'),
        agent_revision: stringOption(context, 'agent-revision'),
        status: status as 'RUNNING' | 'SUCCEEDED' | 'FAILED' | undefined,
        session_id: stringOption(context, 'session'),
        since: stringOption(context, 'since'),
        until: stringOption(context, 'until'),
        limit: intOption(context, 'limit', 1, 100),
        after: stringOption(context, 'after'),
      });
      await showList(context, list, 'traces', (traces) => table(traces, listColumns(traces)));
    },
  },
  {
    name: 'traces show',
    args: '<invocation-key>',
    summary: 'one invocation: its attempts and its spans as a tree',
    positionals: [1, 1],
    options: {
      payloads: { type: 'boolean', help: 'include each span\'s input and output' },
      attempts: { type: 'string', value: 'final|all', help: 'all: also the spans of earlier attempts (default final)' },
    },
    async run(context) {
      const attempts = stringOption(context, 'attempts');
      if (attempts !== undefined && attempts !== 'final' && attempts !== 'all') throw new UsageError(`--attempts must be final or all, not "${attempts}"`);
      const list = (await context.client()).traces.get(context.positionals[0]!, { payloads: context.values.payloads === true, ...(attempts ? { attempts } : {}) });
      const { spans: _, next_cursor: __, ...trace } = await list;
      const spans: Span[] = await list.all();
      output(context, { ...trace, spans }, () => traceTree(trace, spans));
    },
  },
  {
    name: 'traces follow',
    args: '<invocation-key>',
    summary: 'follow an invocation until it ends: its spans live as a tree, or its events as JSON lines with --json',
    positionals: [1, 1],
    options: FOLLOW_OPTIONS,
    async run(context) {
      const key = context.positionals[0]!;
      const client = await context.client();
      const ended = await interruptible(context, key, (signal) => showEvents(context, client, key, signal));
      if (!ended) throw new Error(`the events of invocation ${key} stopped before its outcome; read it with "agent-sessions traces show ${key}"`);
      if (ended.status !== 'SUCCEEDED') throw new InvocationFailedError(key, ended.failure);
      if (context.json) return;
      if (ended.message) write(context.io.stdout, ended.message.content);
      write(context.io.stderr, `invocation ${key} · ${ended.status} · trace: agent-sessions traces show ${key}`);
    },
  },
  {
    name: 'traces cancel',
    args: '<invocation-key>',
    summary: 'cancel a running invocation (it ends FAILED, interrupted)',
    positionals: [1, 1],
    async run(context) {
      const key = context.positionals[0]!;
      const cancelled = await (await context.client()).traces.cancel(key);
      output(context, cancelled, () =>
        fields([
          ['cancelled', key],
          ['status', cancelled.status],
          ['failure', cancelled.failure && `${cancelled.failure.kind}: ${cancelled.failure.message}`],
          ['tokens', tokens(cancelled.usage)?.replace(/ tokens$/, '')],
          ['cost', usd(cancelled.cost_usd)],
        ]),
      );
    },
  },
];
