/** Searching invocations with every filter of GET /traces; the filters live in the URL, so a search is a link. */
import { useState } from 'preact/hooks';
import type { TraceListParams, TraceSummary } from '../../../client/index';
import { api } from '../api';
import { PagedFooter, PageHeader, StatusBadge, Time, usePaged } from '../components';
import { durationBetween, formatDuration, formatTokens, formatUsd } from '../format';
import { Link, navigate, to, useLocation } from '../router';

const FILTERS = ['agent_name', 'agent_revision', 'status', 'session_id', 'since', 'until'] as const;
type Filter = (typeof FILTERS)[number];
type Filters = Partial<Record<Filter, string>>;

function filtersOf(search: string): Filters {
  const params = new URLSearchParams(search);
  return Object.fromEntries(FILTERS.flatMap((name) => (params.get(name) ? [[name, params.get(name)!]] : [])));
}

/** `2024-05-01T10:00:00.000Z` as a datetime-local input shows it (local time, to the minute). */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function TracesPage() {
  const { search } = useLocation();
  const filters = filtersOf(search);
  const traces = usePaged(async (after) => {
    // The cursor carries the window and the filters; they are sent again exactly as on the first page.
    const page = await api().traces.list({ ...(filters as TraceListParams), ...(after ? { after } : {}) });
    return { items: page.traces, next: page.next_cursor };
  }, [search]);
  return (
    <>
      <PageHeader title="Traces" />
      <TraceSearchForm key={search} filters={filters} />
      <TraceTable traces={traces.items} />
      <PagedFooter paged={traces} noun="invocations" />
    </>
  );
}

function TraceSearchForm({ filters }: { filters: Filters }) {
  const [draft, setDraft] = useState<Filters>(filters);
  const field = (name: Filter) => ({
    name,
    id: `filter-${name}`,
    'data-testid': `filter-${name}`,
    value: draft[name] ?? '',
    onInput: (event: Event) => setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value }),
  });
  const submit = (event: Event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const name of FILTERS) {
      const value = draft[name]?.trim();
      if (value) params.set(name, value);
    }
    const query = params.toString();
    navigate(`${to('traces')}${query ? `?${query}` : ''}`);
  };
  const reset = () => {
    setDraft({});
    navigate(to('traces'));
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Search invocations" data-testid="trace-filters">
      <label for="filter-agent_name">Agent</label>
      <input {...field('agent_name')} maxLength={255} />
      <label for="filter-agent_revision">Revision</label>
      <input {...field('agent_revision')} maxLength={255} />
      <label for="filter-status">Status</label>
      <select {...field('status')}>
        <option value="">any</option>
        <option value="RUNNING">RUNNING</option>
        <option value="SUCCEEDED">SUCCEEDED</option>
        <option value="FAILED">FAILED</option>
      </select>
      <label for="filter-session_id">Session</label>
      <input {...field('session_id')} maxLength={100} pattern="[0-9a-zA-Z._:\-]{2,100}" />
      <label for="filter-since">Since</label>
      <input
        type="datetime-local"
        id="filter-since"
        data-testid="filter-since"
        value={toLocalInput(draft.since)}
        onInput={(event) => setDraft({ ...draft, since: fromLocalInput(event.currentTarget.value) })}
      />
      <label for="filter-until">Until</label>
      <input
        type="datetime-local"
        id="filter-until"
        data-testid="filter-until"
        value={toLocalInput(draft.until)}
        onInput={(event) => setDraft({ ...draft, until: fromLocalInput(event.currentTarget.value) })}
      />
      <div class="form-actions">
        <button type="submit" data-testid="search">
          Search
        </button>
        <button type="button" class="secondary" onClick={reset}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** Invocation summaries: status, duration, tokens and cost, each linking to its trace. */
export function TraceTable({ traces, showSession = true }: { traces: TraceSummary[]; showSession?: boolean }) {
  return (
    <div class="table-scroll">
      <table data-testid="traces">
        <thead>
          <tr>
            <th scope="col">Invocation</th>
            {showSession ? <th scope="col">Session</th> : null}
            <th scope="col">Agent</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">Tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {traces.map((trace) => {
            const duration = durationBetween(trace.started_at, trace.ended_at);
            return (
              <tr key={trace.invocation_key} data-testid="trace-row" data-invocation-key={trace.invocation_key}>
                <td>
                  <Link href={to('traces', trace.invocation_key)}>{trace.invocation_key}</Link>
                </td>
                {showSession ? (
                  <td>
                    <Link href={to('sessions', trace.session_id)}>{trace.session_id}</Link>
                  </td>
                ) : null}
                <td>
                  {trace.agent_name ?? '—'}
                  {trace.agent_revision ? <code class="revision"> {trace.agent_revision}</code> : null}
                </td>
                <td>
                  <StatusBadge status={trace.status} />
                </td>
                <td>
                  <Time iso={trace.started_at} />
                </td>
                <td>{duration === undefined ? 'running' : formatDuration(duration)}</td>
                <td>{formatTokens(trace.usage)}</td>
                <td>{trace.cost_usd === undefined ? '—' : formatUsd(trace.cost_usd)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
