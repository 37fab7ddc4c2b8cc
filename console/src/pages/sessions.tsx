/** Sessions, newest first, and one session: its conversation, its invocations and its audit log. */
import { useState } from 'preact/hooks';
import type { Session } from '../../../client/index';
import { api } from '../api';
import { PagedFooter, PageHeader, StatusBadge, Table, TextBlock, Time, usePaged } from '../components';
import { prettyJson } from '../format';
import { Link, to } from '../router';
import { TraceTable } from './traces';

export function SessionsPage() {
  const sessions = usePaged(async (after) => {
    const page = await api().sessions.list({ ...(after ? { after } : {}) });
    return { items: page.sessions, next: page.next_cursor };
  }, []);
  return (
    <>
      <PageHeader title="Sessions" />
      <Table testId="sessions" columns={['Session', 'State', 'Agent', 'Invocations', 'Updated']}>
        {sessions.items.map((session) => (
          <tr key={session.id} data-testid="session-row" data-session-id={session.id}>
            <td>
              <Link href={to('sessions', session.id)}>{session.id}</Link>
            </td>
            <td>
              <StatusBadge status={session.state} />
            </td>
            <td>{session.agent_name ? <Link href={to('agents', session.agent_name)}>{session.agent_name}</Link> : '—'}</td>
            <td>{session.invocation_count}</td>
            <td>
              <Time iso={session.updated_at} />
            </td>
          </tr>
        ))}
      </Table>
      <PagedFooter paged={sessions} noun="sessions" />
    </>
  );
}

export function SessionPage({ id }: { id: string }) {
  const [session, setSession] = useState<Session>();
  // Each page of messages comes with the session as it is now.
  const messages = usePaged(async (after) => {
    const page = await api().sessions.get(id, { ...(after ? { after } : {}) });
    setSession(page.session);
    return { items: page.messages, next: page.next_cursor };
  }, [id]);
  const audit = usePaged(async (after) => {
    const page = await api().sessions.audit(id, { ...(after ? { after } : {}) });
    return { items: page.events, next: page.next_cursor };
  }, [id]);

  return (
    <>
      <PageHeader title={`Session ${id}`} />
      {session ? (
        <dl class="facts" data-testid="session-summary">
          <dt>State</dt>
          <dd>
            <StatusBadge status={session.state} />
          </dd>
          <dt>Agent</dt>
          <dd>
            {session.agent_name ? <Link href={to('agents', session.agent_name)}>{session.agent_name}</Link> : '—'}
            {session.agent_revision ? <code class="revision"> {session.agent_revision}</code> : null}
          </dd>
          <dt>Invocations</dt>
          <dd>{session.invocation_count}</dd>
          <dt>Created</dt>
          <dd>
            <Time iso={session.created_at} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time iso={session.updated_at} />
          </dd>
          {session.current_invocation_key ? (
            <>
              <dt>Running</dt>
              <dd>
                <Link href={to('traces', session.current_invocation_key)}>{session.current_invocation_key}</Link>
              </dd>
            </>
          ) : null}
        </dl>
      ) : null}

      <section aria-labelledby="conversation-heading">
        <h2 id="conversation-heading">Conversation</h2>
        <ol class="conversation" data-testid="conversation">
          {messages.items.map((message) => (
            <li key={message.cursor} class={`message role-${message.role}`} data-testid="message" data-role={message.role}>
              <div class="message-meta">
                <strong>{message.role}</strong> · <Time iso={message.created_at} /> ·{' '}
                <Link href={to('traces', message.invocation_key)}>trace</Link>
              </div>
              <TextBlock text={message.content} testId="message-content" />
            </li>
          ))}
        </ol>
        <PagedFooter paged={messages} noun="messages" />
      </section>

      {session?.id === id ? <Invocations id={id} since={session.created_at} /> : null}

      <section aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit log</h2>
        <Table testId="audit" columns={['Time', 'Type', 'Invocation', 'Payload']}>
          {audit.items.map((event) => (
            <tr key={event.id} data-testid="audit-row" data-type={event.type}>
              <td>
                <Time iso={event.event_time} />
              </td>
              <td>
                <code>{event.type}</code>
              </td>
              <td>
                <Link href={to('traces', event.invocation_key)}>{event.invocation_key}</Link>
              </td>
              <td>
                <details>
                  <summary>{summarizePayload(event.payload)}</summary>
                  <pre class="json">{prettyJson(event.payload)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </Table>
        <PagedFooter paged={audit} noun="audit events" />
      </section>
    </>
  );
}

/** The session's invocations: every one since it began, not only the search's default 31 days. */
function Invocations({ id, since }: { id: string; since: string }) {
  const invocations = usePaged(async (after) => {
    const page = await api().traces.list({ session_id: id, since, ...(after ? { after } : {}) });
    return { items: page.traces, next: page.next_cursor };
  }, [id, since]);
  return (
    <section aria-labelledby="invocations-heading">
      <h2 id="invocations-heading">Invocations</h2>
      <TraceTable traces={invocations.items} showSession={false} />
      <PagedFooter paged={invocations} noun="invocations" />
    </section>
  );
}

/** A one-line hint of an audit payload: its keys. */
function summarizePayload(payload: Record<string, unknown>): string {
  const keys = Object.keys(payload);
  return keys.length ? keys.slice(0, 5).join(', ') + (keys.length > 5 ? ', …' : '') : '(empty)';
}
