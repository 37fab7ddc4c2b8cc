/**
 * One invocation: its summary, failure and attempts, and its spans as a tree over a
 * timeline. Spans load without payloads (500 a page); a span's payloads are fetched when
 * it is expanded. While the invocation runs, its events are followed (long polls) so
 * spans appear as they start and end, and it can be cancelled.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { NotFoundError, type Attempt, type Span, type TraceGetResponse } from '../../../client/index';
import { api, errorMessage } from '../api';
import { CopyButton, ErrorMessage, Loading, PageHeader, StatusBadge, Table, Time, useAction } from '../components';
import { durationBetween, formatBytes, formatDuration, formatInteger, formatTokens, formatUsd, prettyJson } from '../format';
import { Link, to } from '../router';
import { applyEvent, barOf, mergeAttempt, mergeSpan, PayloadLoader, spanPosition, timelineOf, treeRows, usageSoFar, type SpanPayloads, type SpanRow } from '../trace-model';

type Summary = Omit<TraceGetResponse, 'spans' | 'next_cursor'>;

function summaryOf(page: TraceGetResponse): Summary {
  const { spans: _spans, next_cursor: _next, ...summary } = page;
  return summary;
}

/** The API's bound for a page without payloads. */
const SPAN_PAGE = 500;
/** A level of the tree, and the room for the children toggle, in the span column. */
const INDENT_REM = 1.25;
const TWISTY_REM = 1.5;

export function TracePage({ invocationKey }: { invocationKey: string }) {
  const spans = useRef(new Map<string, Span>());
  const attempts = useRef(new Map<number, Attempt>());
  const [, changed] = useReducer((version: number) => version + 1, 0);
  const [summary, setSummary] = useState<Summary>();
  const [error, setError] = useState<unknown>();
  const [live, setLive] = useState(false);
  const [liveError, setLiveError] = useState<unknown>();
  const [showSuperseded, setShowSuperseded] = useState(false);
  const [allAttemptsLoaded, setAllAttemptsLoaded] = useState(false);
  const [supersededError, setSupersededError] = useState<unknown>();
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [now, setNow] = useState(Date.now());

  const loader = useMemo(
    () =>
      new PayloadLoader(async (spanId) => {
        try {
          return await api().traces.span(invocationKey, spanId);
        } catch (error) {
          // Not readable yet: spans become readable seconds after they happen.
          if (error instanceof NotFoundError) return undefined;
          throw error;
        }
      }),
    [invocationKey],
  );

  /** Every span of the mode without payloads; the last page's summary. A running invocation's pages stop at the first short one (events bring the rest). */
  async function loadSpans(mode: 'final' | 'all'): Promise<Summary> {
    let after: string | undefined;
    for (;;) {
      const page = await api().traces.get(invocationKey, { payloads: false, attempts: mode, limit: SPAN_PAGE, ...(after ? { after } : {}) });
      for (const span of page.spans) mergeSpan(spans.current, span);
      for (const attempt of page.attempts ?? []) mergeAttempt(attempts.current, attempt);
      if (!page.next_cursor || (page.status === 'RUNNING' && page.spans.length < SPAN_PAGE)) return summaryOf(page);
      after = page.next_cursor;
    }
  }

  async function follow(signal: AbortSignal): Promise<void> {
    setLive(true);
    let scheduled = false;
    try {
      for await (const event of api().traces.events(invocationKey, { limit: 500, wait_seconds: 20 }, { signal })) {
        applyEvent(spans.current, attempts.current, event);
        if (event.type === 'invocation_ended') {
          setSummary((previous) => previous && { ...previous, status: event.status, ended_at: event.time, ...(event.failure ? { failure: event.failure } : {}) });
        }
        // One render per frame however many events a page brought.
        if (!scheduled) {
          scheduled = true;
          requestAnimationFrame(() => {
            scheduled = false;
            setNow(Date.now());
            changed(0);
          });
        }
      }
    } finally {
      setLive(false);
    }
    if (signal.aborted) return;
    // The outcome's figures (usage, cost, ended_at) and the spans as stored.
    setSummary(await loadSpans('final'));
    changed(0);
  }

  // The page is keyed by the invocation (main.tsx): a new key is a new page, with empty maps.
  useEffect(() => {
    const stop = new AbortController();
    (async () => {
      const loaded = await loadSpans('final');
      if (stop.signal.aborted) return;
      setSummary(loaded);
      setNow(Date.now());
      if (loaded.status !== 'RUNNING') return;
      await follow(stop.signal).catch((failure: unknown) => !stop.signal.aborted && setLiveError(failure));
    })().catch((failure: unknown) => !stop.signal.aborted && setError(failure));
    return () => stop.abort();
  }, []);

  // Bars of running spans grow while the page follows.
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);

  useEffect(() => {
    if (!showSuperseded || allAttemptsLoaded) return;
    setSupersededError(undefined);
    loadSpans('all').then(
      () => {
        setAllAttemptsLoaded(true);
        changed(0);
      },
      setSupersededError,
    );
  }, [showSuperseded, allAttemptsLoaded]);

  if (error) {
    return (
      <>
        <PageHeader title={`Trace ${invocationKey}`} />
        <ErrorMessage error={error} />
      </>
    );
  }
  if (!summary) {
    return (
      <>
        <PageHeader title={`Trace ${invocationKey}`} />
        <Loading label="Loading the trace…" />
      </>
    );
  }

  const attemptList = [...attempts.current.values()].sort((a, b) => a.number - b.number);
  const latestAttempt = Math.max(0, ...attemptList.map((attempt) => attempt.number), ...[...spans.current.keys()].map((id) => spanPosition(id).attempt));
  const rows = treeRows(spans.current.values(), { latestAttempt, showSuperseded, collapsed });
  const toggle = (set: ReadonlySet<string>, id: string) => {
    const next = new Set(set);
    if (!next.delete(id)) next.add(id);
    return next;
  };

  return (
    <>
      <PageHeader title={`Trace ${invocationKey}`}>
        {live ? (
          <span class="live" data-testid="live" role="status">
            Live
          </span>
        ) : null}
        {summary.status === 'RUNNING' ? <CancelButton invocationKey={invocationKey} onCancelled={(cancelled) => setSummary((previous) => previous && { ...previous, ...cancelled })} /> : null}
      </PageHeader>
      {liveError ? (
        <p class="error" role="alert" data-testid="live-error">
          Live updates stopped: {errorMessage(liveError)}
        </p>
      ) : null}
      <TraceSummaryView summary={summary.status === 'RUNNING' ? { ...summary, usage: usageSoFar(spans.current.values(), summary.usage) } : summary} />
      {summary.failure ? (
        <section class="failure" data-testid="failure" aria-label="Failure">
          <h2>Failure: {summary.failure.kind}</h2>
          <p class="text">{summary.failure.message}</p>
        </section>
      ) : null}
      <AttemptsTable attempts={attemptList} />
      <section aria-labelledby="spans-heading">
        <div class="section-header">
          <h2 id="spans-heading">Spans</h2>
          <label class="toggle">
            <input type="checkbox" data-testid="toggle-superseded" checked={showSuperseded} onChange={(event) => setShowSuperseded(event.currentTarget.checked)} />
            Show superseded attempts
          </label>
        </div>
        <ErrorMessage error={supersededError} />
        {summary.spans_expired ? <p class="empty">The spans of this invocation have expired.</p> : null}
        <SpanTree
          rows={rows}
          now={now}
          expanded={expanded}
          onToggleDetails={(id) => setExpanded((set) => toggle(set, id))}
          onToggleChildren={(id, open) => setCollapsed((set) => (open === !set.has(id) ? set : toggle(set, id)))}
          details={(span) => <SpanDetails span={span} loader={loader} latestAttempt={latestAttempt} />}
        />
        {rows.length === 0 && !summary.spans_expired ? <p class="empty">{summary.status === 'RUNNING' ? 'No span yet.' : 'No spans.'}</p> : null}
      </section>
    </>
  );
}

function TraceSummaryView({ summary }: { summary: Summary }) {
  const duration = durationBetween(summary.started_at, summary.ended_at);
  return (
    <dl class="facts" data-testid="trace-summary">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={summary.status} />
      </dd>
      <dt>Session</dt>
      <dd>
        <Link href={to('sessions', summary.session_id)}>{summary.session_id}</Link> (invocation {summary.session_position})
      </dd>
      <dt>Agent</dt>
      <dd>
        {summary.agent_name ? <Link href={to('agents', summary.agent_name)}>{summary.agent_name}</Link> : '—'}
        {summary.agent_revision ? <code class="revision"> {summary.agent_revision}</code> : null}
      </dd>
      <dt>Started</dt>
      <dd>
        <Time iso={summary.started_at} />
      </dd>
      <dt>Ended</dt>
      <dd>{summary.ended_at ? <Time iso={summary.ended_at} /> : 'running'}</dd>
      <dt>Duration</dt>
      <dd data-testid="trace-duration">{duration === undefined ? '—' : formatDuration(duration)}</dd>
      <dt>Tokens</dt>
      <dd data-testid="trace-tokens">{formatTokens(summary.usage)}</dd>
      <dt>Cost</dt>
      <dd data-testid="trace-cost">{summary.cost_usd === undefined ? 'not priced' : formatUsd(summary.cost_usd)}</dd>
    </dl>
  );
}

function AttemptsTable({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return null;
  return (
    <section aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Attempts</h2>
      <Table testId="attempts" columns={['#', 'Status', 'Started', 'Duration', 'Tokens', 'Failure']}>
        {attempts.map((attempt) => {
          const duration = durationBetween(attempt.started_at, attempt.ended_at);
          return (
            <tr key={attempt.number} data-testid="attempt-row">
              <td>{attempt.number}</td>
              <td>
                <StatusBadge status={attempt.status} />
              </td>
              <td>
                <Time iso={attempt.started_at} />
              </td>
              <td>{duration === undefined ? 'running' : formatDuration(duration)}</td>
              <td>{formatTokens(attempt.usage)}</td>
              <td class="text">{attempt.failure ? `${attempt.failure.kind}: ${attempt.failure.message}` : ''}</td>
            </tr>
          );
        })}
      </Table>
    </section>
  );
}

function CancelButton({ invocationKey, onCancelled }: { invocationKey: string; onCancelled: (summary: Partial<Summary>) => void }) {
  const { busy, error, run } = useAction(async () => onCancelled(await api().traces.cancel(invocationKey)));
  const cancel = () => run();
  return (
    <>
      <button type="button" class="danger" data-testid="cancel" disabled={busy} onClick={cancel}>
        {busy ? 'Cancelling…' : 'Cancel run'}
      </button>
      <ErrorMessage error={error} testId="cancel-error" />
    </>
  );
}

interface SpanTreeProps {
  rows: SpanRow[];
  now: number;
  expanded: ReadonlySet<string>;
  onToggleDetails: (id: string) => void;
  onToggleChildren: (id: string, open: boolean) => void;
  details: (span: Span) => ComponentChildren;
}

/** The rows with their timeline bars; arrow keys move between rows, right and left open and close a span's children. */
function SpanTree({ rows, now, expanded, onToggleDetails, onToggleChildren, details }: SpanTreeProps) {
  const timeline = timelineOf(
    rows.map((row) => row.span),
    now,
  );
  const onKeyDown = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement;
    const index = Number(target.dataset.rowIndex);
    if (!target.dataset.rowIndex) return;
    const row = rows[index];
    let next: number | undefined;
    if (event.key === 'ArrowDown') next = index + 1;
    else if (event.key === 'ArrowUp') next = index - 1;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = rows.length - 1;
    else if (row && (event.key === 'ArrowRight' || event.key === 'ArrowLeft') && row.children > 0) {
      onToggleChildren(row.span.id, event.key === 'ArrowRight');
      event.preventDefault();
      return;
    } else return;
    event.preventDefault();
    (event.currentTarget as HTMLElement).querySelector<HTMLElement>(`[data-row-index="${Math.max(0, Math.min(rows.length - 1, next))}"]`)?.focus();
  };
  if (rows.length === 0) return null;
  return (
    <div class="span-tree">
      <div class="span-tree-head" aria-hidden="true">
        <span>Span</span>
        <span class="timeline-scale">
          <span>0</span>
          <span>{formatDuration(timeline.end - timeline.start)}</span>
        </span>
      </div>
      <ol class="spans" aria-label="Spans" data-testid="span-tree" onKeyDown={onKeyDown}>
        {rows.map((row, index) => (
          <SpanRowView
            key={row.span.id}
            row={row}
            index={index}
            bar={barOf(row.span, timeline, now)}
            open={expanded.has(row.span.id)}
            onToggleDetails={onToggleDetails}
            onToggleChildren={onToggleChildren}
            details={details}
          />
        ))}
      </ol>
    </div>
  );
}

interface SpanRowProps {
  row: SpanRow;
  index: number;
  bar: { left: number; width: number };
  open: boolean;
  onToggleDetails: (id: string) => void;
  onToggleChildren: (id: string, open: boolean) => void;
  details: (span: Span) => ComponentChildren;
}

function SpanRowView({ row, index, bar, open, onToggleDetails, onToggleChildren, details }: SpanRowProps) {
  const { span, depth, superseded } = row;
  const duration = durationBetween(span.started_at, span.ended_at);
  const detailsId = `span-details-${span.id}`;
  return (
    <li class={`span${superseded ? ' superseded' : ''}`} aria-level={depth + 1} data-testid="span" data-span-id={span.id}>
      <div class="span-line">
        <button
          type="button"
          class="span-row"
          data-testid="span-row"
          data-span-id={span.id}
          data-status={span.status}
          data-superseded={superseded ? 'true' : 'false'}
          data-row-index={index}
          aria-expanded={open}
          aria-controls={open ? detailsId : undefined}
          onClick={() => onToggleDetails(span.id)}
        >
          <span class="span-label" style={{ paddingLeft: `${depth * INDENT_REM + TWISTY_REM}rem` }}>
            <span class="span-name">{span.name}</span>
            <span class={`badge type-${span.type}`}>{span.type === 'model_call' ? 'model' : 'tool'}</span>
            <span class={`badge status-${span.status.toLowerCase()}`}>{span.status}</span>
            {superseded ? <span class="badge superseded-badge">superseded</span> : null}
            <span class="span-figures">
              {duration === undefined ? 'running' : formatDuration(duration)}
              {span.usage ? ` · ${formatInteger(span.usage.input_tokens + span.usage.output_tokens)} tok` : ''}
            </span>
          </span>
          <span class="span-timeline" aria-hidden="true">
            <span class={`bar status-${span.status.toLowerCase()}`} style={{ left: `${bar.left}%`, width: `${bar.width}%` }} />
          </span>
        </button>
        {row.children > 0 ? (
          // Beside the row's button, not in it (no button in a button), laid over its indentation.
          <button
            type="button"
            class="twisty"
            style={{ left: `${depth * INDENT_REM}rem` }}
            tabIndex={-1}
            aria-label={`${row.collapsed ? 'Show' : 'Hide'} ${row.children} child spans`}
            aria-expanded={!row.collapsed}
            onClick={() => onToggleChildren(span.id, row.collapsed)}
            data-testid="span-children-toggle"
          >
            {row.collapsed ? '▸' : '▾'}
          </button>
        ) : null}
      </div>
      {open ? (
        <div id={detailsId} class="span-details-wrap">
          {details(span)}
        </div>
      ) : null}
    </li>
  );
}

type PayloadState = { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'missing' } | { state: 'loaded'; payloads: SpanPayloads };

function SpanDetails({ span, loader, latestAttempt }: { span: Span; loader: PayloadLoader; latestAttempt: number }) {
  const [payloads, setPayloads] = useState<PayloadState>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const ended = span.ended_at !== null;
  useEffect(() => {
    let current = true;
    setPayloads({ state: 'loading' });
    loader.get(span).then(
      (found) => current && setPayloads(found ? { state: 'loaded', payloads: found } : { state: 'missing' }),
      (error: unknown) => current && setPayloads({ state: 'error', error }),
    );
    return () => {
      current = false;
    };
    // Fetched again once the span ends (its output exists then).
  }, [span.id, ended, attempt]);
  const duration = durationBetween(span.started_at, span.ended_at);
  return (
    <div class="span-details" data-testid="span-details" data-span-id={span.id}>
      <dl class="facts compact">
        <dt>Id</dt>
        <dd>
          <code>{span.id}</code>
        </dd>
        <dt>Parent</dt>
        <dd>{span.parent_id ? <code>{span.parent_id}</code> : '—'}</dd>
        <dt>Started</dt>
        <dd>
          <Time iso={span.started_at} />
        </dd>
        <dt>Duration</dt>
        <dd>{duration === undefined ? 'running' : formatDuration(duration)}</dd>
        <dt>Tokens</dt>
        <dd>{span.usage ? formatTokens(span.usage) : '—'}</dd>
      </dl>
      {payloads.state === 'loading' ? <Loading label="Loading payloads…" /> : null}
      {payloads.state === 'error' ? <ErrorMessage error={payloads.error} /> : null}
      {payloads.state === 'missing' ? (
        <p class="empty" data-testid="payload-missing">
          The payloads of this span are not readable yet.{' '}
          <button type="button" class="secondary small" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        </p>
      ) : null}
      {payloads.state === 'loaded' ? (
        <div class="payloads">
          <PayloadPanel part="input" label="Input" value={payloads.payloads.input} bytes={payloads.payloads.input_bytes} sha256={payloads.payloads.input_sha256} truncated={payloads.payloads.input_truncated} />
          <PayloadPanel part="output" label="Output" value={payloads.payloads.output} bytes={payloads.payloads.output_bytes} sha256={payloads.payloads.output_sha256} truncated={payloads.payloads.output_truncated} />
        </div>
      ) : null}
    </div>
  );
}

interface PayloadPanelProps {
  part: 'input' | 'output';
  label: string;
  value: unknown;
  bytes: number | undefined;
  sha256: string | undefined;
  truncated: boolean | undefined;
}

/** A payload as text: pretty JSON, or the preview of a truncated one; its size and digest describe the complete value. */
function PayloadPanel({ part, label, value, bytes, sha256, truncated }: PayloadPanelProps) {
  if (value === undefined && bytes === undefined) {
    return (
      <section class="payload" data-testid={`payload-${part}`} aria-label={label}>
        <h3>{label}</h3>
        <p class="empty">None recorded{part === 'output' ? ' (yet)' : ''}.</p>
      </section>
    );
  }
  const preview = truncated && value && typeof value === 'object' ? (value as { preview?: unknown }).preview : undefined;
  const text = typeof preview === 'string' ? preview : prettyJson(value);
  return (
    <section class="payload" data-testid={`payload-${part}`} aria-label={label}>
      <div class="payload-header">
        <h3>{label}</h3>
        {bytes !== undefined ? (
          <span class="muted" data-testid={`payload-${part}-bytes`} title={`${bytes} bytes`}>
            {formatBytes(bytes)}
          </span>
        ) : null}
        {truncated ? (
          <span class="badge truncated" data-testid={`payload-${part}-truncated`}>
            Truncated: the first 4 KiB of {bytes === undefined ? 'the value' : `${formatInteger(bytes)} bytes`}
          </span>
        ) : null}
        <CopyButton text={text} label={`Copy ${label.toLowerCase()}`} testId={`copy-${part}`} />
      </div>
      {sha256 ? (
        <p class="digest">
          SHA-256 <code data-testid={`payload-${part}-sha256`}>{sha256}</code>
        </p>
      ) : null}
      <pre class="json" data-testid={`payload-${part}-text`} tabIndex={0}>
        {text}
      </pre>
    </section>
  );
}
