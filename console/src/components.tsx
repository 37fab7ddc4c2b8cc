/** The pieces every page uses: loading and paging hooks, error and status display, buttons. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from './api';
import { formatTime } from './format';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (a newer run wins; an unmounted page ignores late answers). */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, version]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: useCallback(() => setVersion((v) => v + 1), []),
  };
}

export interface Page<T> {
  items: T[];
  next?: string | undefined;
}

export interface Paged<T> {
  items: T[];
  error: unknown;
  loading: boolean;
  /** The API's `next_cursor` of the last page, while there is one. */
  next: string | undefined;
  loadMore: () => void;
  reload: () => void;
}

/** A list read a page at a time by the API's `next_cursor`; `loadMore` appends the next page. */
export function usePaged<T>(fetchPage: (after: string | undefined) => Promise<Page<T>>, deps: unknown[]): Paged<T> {
  const [state, setState] = useState<{ items: T[]; next?: string | undefined; error?: unknown; loading: boolean }>({ items: [], loading: true });
  const generation = useRef(0);
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;

  const load = useCallback((after: string | undefined, append: boolean) => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, error: undefined, loading: true, ...(append ? {} : { items: [], next: undefined }) }));
    fetchRef.current(after).then(
      (page) => {
        if (mine !== generation.current) return;
        setState((previous) => ({ items: append ? [...previous.items, ...page.items] : page.items, next: page.next, loading: false }));
      },
      (error: unknown) => {
        if (mine !== generation.current) return;
        setState((previous) => ({ ...previous, error, loading: false }));
      },
    );
  }, []);

  useEffect(() => {
    load(undefined, false);
    return () => void ++generation.current;
  }, deps);

  return {
    items: state.items,
    error: state.error,
    loading: state.loading,
    next: state.next,
    loadMore: () => state.next !== undefined && load(state.next, true),
    reload: () => load(undefined, false),
  };
}

/** A failure, with the API's message. */
export function ErrorMessage({ error, testId = 'error' }: { error: unknown; testId?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" data-testid={testId}>
      {errorMessage(error)}
    </p>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status" data-testid="loading">
      {label}
    </p>
  );
}

/** The loading state, the error and a "Load more" button for a paged list. */
export function PagedFooter({ paged, noun }: { paged: Paged<unknown>; noun: string }) {
  return (
    <div class="paged-footer">
      <ErrorMessage error={paged.error} />
      {paged.loading ? <Loading /> : null}
      {!paged.loading && !paged.error && paged.items.length === 0 && paged.next === undefined ? <p class="empty">No {noun}.</p> : null}
      {!paged.loading && paged.next !== undefined ? (
        <button type="button" class="secondary" data-testid="load-more" onClick={paged.loadMore}>
          Load more {noun}
        </button>
      ) : null}
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status.toLowerCase()}`} data-testid="status">{status}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return null;
  return (
    <time dateTime={iso} title={iso}>
      {formatTime(iso)}
    </time>
  );
}

/** Copies `text` to the clipboard and says so. */
export function CopyButton({ text, label = 'Copy', testId }: { text: string; label?: string; testId?: string }) {
  const [done, setDone] = useState<'copied' | 'failed' | undefined>();
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setDone('copied'),
      () => setDone('failed'),
    );
  useEffect(() => {
    if (!done) return;
    const timer = setTimeout(() => setDone(undefined), 2000);
    return () => clearTimeout(timer);
  }, [done]);
  return (
    <button type="button" class="secondary small" onClick={copy} data-testid={testId} aria-live="polite">
      {done === 'copied' ? 'Copied' : done === 'failed' ? 'Copy failed' : label}
    </button>
  );
}

/**
 * An action a person starts (a form's submit, a click): `run` it (a submit event is kept
 * from reloading the page); `busy` while it runs, `error` when it failed.
 */
export function useAction(action: () => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (event?: Event) => {
    event?.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/**
 * A value the API shows only in one answer (an API key, a webhook's signing secret): shown
 * with a copy button until dismissed. `testIds` name its parts for the browser tests.
 */
export function ShownOnce(props: {
  label: string;
  value: string;
  copyLabel: string;
  testIds: { section: string; value: string; copy: string; dismiss: string };
  onDismiss: () => void;
  children: ComponentChildren;
}) {
  const { testIds } = props;
  return (
    <section class="once" data-testid={testIds.section} aria-label={props.label}>
      <p>{props.children}</p>
      <code class="secret-once" data-testid={testIds.value}>
        {props.value}
      </code>
      <div class="form-actions">
        <CopyButton text={props.value} label={props.copyLabel} testId={testIds.copy} />
        <button type="button" class="secondary small" data-testid={testIds.dismiss} onClick={props.onDismiss}>
          Done
        </button>
      </div>
    </section>
  );
}

/** A destructive action asked twice: the first click asks, the second does it (no browser dialog). */
export function ConfirmButton(props: { label: string; confirmLabel?: string; onConfirm: () => Promise<unknown>; testId?: string; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  const { busy, error, run: confirm } = useAction(async () => {
    await props.onConfirm();
    setAsking(false);
  });
  if (!asking) {
    return (
      <button type="button" class="danger small" disabled={props.disabled} data-testid={props.testId} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <button type="button" class="danger small" disabled={busy} data-testid={props.testId ? `${props.testId}-confirm` : undefined} onClick={() => confirm()} autoFocus>
        {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
      </button>
      <button type="button" class="secondary small" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
      <ErrorMessage error={error} />
    </span>
  );
}

/** A page's title and, beside it, its actions. */
export function PageHeader({ title, children }: { title: ComponentChildren; children?: ComponentChildren }) {
  useEffect(() => {
    if (typeof title === 'string') document.title = `${title} · Agent Sessions`;
  }, [title]);
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children ? <div class="actions">{children}</div> : null}
    </header>
  );
}

/** Text of any length kept as text (never parsed as markup), wrapped. */
export function TextBlock({ text, testId }: { text: string; testId?: string }) {
  return (
    <pre class="text" data-testid={testId}>
      {text}
    </pre>
  );
}

/** The header of a table's actions column: named for screen readers only. */
export const ACTIONS = null;

/**
 * A table that scrolls sideways on narrow screens: `columns` name the header cells
 * (`ACTIONS` for the buttons column), `children` are its rows.
 */
export function Table({ testId, columns, children }: { testId: string; columns: (string | typeof ACTIONS)[]; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th scope="col" key={column ?? `actions-${i}`}>
                {column ?? <span class="visually-hidden">Actions</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
