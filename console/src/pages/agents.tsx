/** Agents, and one agent: its revisions and a side-by-side diff of two revisions' configurations. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorMessage, Loading, PageHeader, Table, Time, useAsync } from '../components';
import { sideBySide } from '../diff';
import { canonicalJson } from '../format';
import { Link, to } from '../router';

export function AgentsPage() {
  const agents = useAsync(() => api().agents.list(), []);
  return (
    <>
      <PageHeader title="Agents" />
      <ErrorMessage error={agents.error} />
      {agents.loading ? <Loading /> : null}
      {agents.data ? (
        agents.data.agents.length === 0 ? (
          <p class="empty">No agents yet: an agent appears when a session first runs with its name.</p>
        ) : (
          <Table testId="agents" columns={['Agent', 'Revisions', 'Created', 'Updated']}>
            {agents.data.agents.map((agent) => (
              <tr key={agent.name} data-testid="agent-row">
                <td>
                  <Link href={to('agents', agent.name)}>{agent.name}</Link>
                </td>
                <td>{agent.revision_count}</td>
                <td>
                  <Time iso={agent.created_at} />
                </td>
                <td>
                  <Time iso={agent.updated_at} />
                </td>
              </tr>
            ))}
          </Table>
        )
      ) : null}
    </>
  );
}

export function AgentPage({ name }: { name: string }) {
  const agent = useAsync(() => api().agents.get(name), [name]);
  return (
    <>
      <PageHeader title={`Agent ${name}`}>
        <Link class="button secondary" href={`${to('traces')}?${new URLSearchParams({ agent_name: name })}`}>
          Its traces
        </Link>
      </PageHeader>
      <ErrorMessage error={agent.error} />
      {agent.loading ? <Loading /> : null}
      {agent.data ? (
        <>
          <section aria-labelledby="revisions-heading">
            <h2 id="revisions-heading">Revisions</h2>
            <Table testId="revisions" columns={['Revision', 'First ran', 'Traces']}>
              {agent.data.revisions.map((revision) => (
                <tr key={revision.revision} data-testid="revision-row">
                  <td>
                    <code>{revision.revision}</code>
                    {revision.revision === agent.data!.current.revision ? <span class="badge current">current</span> : null}
                  </td>
                  <td>
                    <Time iso={revision.created_at} />
                  </td>
                  <td>
                    <Link href={`${to('traces')}?${new URLSearchParams({ agent_name: name, agent_revision: revision.revision })}`}>traces</Link>
                  </td>
                </tr>
              ))}
            </Table>
          </section>
          <RevisionDiff name={name} revisions={agent.data.revisions.map((revision) => revision.revision)} />
        </>
      ) : null}
    </>
  );
}

function RevisionDiff({ name, revisions }: { name: string; revisions: string[] }) {
  const [left, setLeft] = useState(revisions[1] ?? revisions[0] ?? '');
  const [right, setRight] = useState(revisions[0] ?? '');
  const configs = useAsync(async () => {
    const [a, b] = await Promise.all([api().agents.revision(name, left), api().agents.revision(name, right)]);
    return { left: canonicalJson(a.config), right: canonicalJson(b.config) };
  }, [name, left, right]);
  const rows = configs.data ? sideBySide(configs.data.left, configs.data.right) : [];
  const select = (id: string, value: string, set: (value: string) => void) => (
    <select id={id} data-testid={id} value={value} onChange={(event) => set(event.currentTarget.value)}>
      {revisions.map((revision) => (
        <option key={revision} value={revision}>
          {revision}
        </option>
      ))}
    </select>
  );
  return (
    <section aria-labelledby="diff-heading">
      <h2 id="diff-heading">Configuration</h2>
      <div class="diff-controls">
        <label for="diff-left">Left</label>
        {select('diff-left', left, setLeft)}
        <label for="diff-right">Right</label>
        {select('diff-right', right, setRight)}
        {configs.data ? <span class="muted">{left === right ? 'the same revision' : `${rows.filter((row) => row.kind !== 'same').length} lines differ`}</span> : null}
      </div>
      <ErrorMessage error={configs.error} />
      {configs.loading ? <Loading /> : null}
      {configs.data ? (
        <div class="table-scroll">
          <table class="diff" data-testid="config-diff">
            <thead>
              <tr>
                <th scope="col" colSpan={2}>
                  <code>{left}</code>
                </th>
                <th scope="col" colSpan={2}>
                  <code>{right}</code>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row, index) => (
                <tr key={index} class={`diff-${row.kind}`} data-kind={row.kind}>
                  <td class="line-number">{row.left?.number ?? ''}</td>
                  <td class={`code${row.left && row.kind !== 'same' ? ' removed' : ''}`}>{row.left?.text ?? ''}</td>
                  <td class="line-number">{row.right?.number ?? ''}</td>
                  <td class={`code${row.right && row.kind !== 'same' ? ' added' : ''}`}>{row.right?.text ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
