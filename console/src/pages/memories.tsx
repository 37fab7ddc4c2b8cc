/** The memories of a group, active and replaced, newest first, with delete. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ACTIONS, ConfirmButton, PagedFooter, PageHeader, StatusBadge, Table, TextBlock, Time, usePaged } from '../components';
import { Link, navigate, to, useLocation } from '../router';

export function MemoriesPage() {
  const { search } = useLocation();
  const group = new URLSearchParams(search).get('group') ?? '';
  return (
    <>
      <PageHeader title="Memories" />
      <GroupForm key={group} group={group} />
      {group ? <MemoryList group={group} /> : <p class="empty">Name a memory group: the <code>memory.group</code> of the agents sharing it.</p>}
    </>
  );
}

function GroupForm({ group }: { group: string }) {
  const [draft, setDraft] = useState(group);
  const submit = (event: Event) => {
    event.preventDefault();
    const value = draft.trim();
    navigate(value ? `${to('memories')}?${new URLSearchParams({ group: value })}` : to('memories'));
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Memory group">
      <label for="memory-group">Group</label>
      <input id="memory-group" data-testid="memory-group" value={draft} maxLength={256} required onInput={(event) => setDraft(event.currentTarget.value)} />
      <button type="submit" data-testid="memory-group-submit">
        Show
      </button>
    </form>
  );
}

function MemoryList({ group }: { group: string }) {
  const memories = usePaged(async (after) => {
    const page = await api().memories.list({ group, ...(after ? { after } : {}) });
    return { items: page.memories, next: page.next_cursor };
  }, [group]);
  return (
    <section aria-label={`Memories of ${group}`}>
      <div class="section-header">
        <h2>
          Group <code>{group}</code>
        </h2>
        <ConfirmButton
          label="Delete all"
          confirmLabel={`Yes, delete every memory of ${group}`}
          testId="delete-all-memories"
          disabled={memories.items.length === 0}
          onConfirm={async () => {
            await api().memories.deleteAll({ group });
            memories.reload();
          }}
        />
      </div>
      <Table testId="memories" columns={['Memory', 'Status', 'Created', 'Source', ACTIONS]}>
        {memories.items.map((memory) => (
          <tr key={memory.id} data-testid="memory-row" data-memory-id={memory.id} data-status={memory.status}>
            <td>
              <TextBlock text={memory.content} />
              <code class="muted">{memory.id}</code>
            </td>
            <td>
              <StatusBadge status={memory.status} />
            </td>
            <td>
              <Time iso={memory.created_at} />
            </td>
            <td>
              <Link href={to('sessions', memory.source_session)}>{memory.source_session}</Link>
              <br />
              <Link href={to('traces', memory.source_invocation)}>{memory.source_invocation}</Link>
            </td>
            <td>
              <ConfirmButton
                label="Delete"
                testId="delete-memory"
                onConfirm={async () => {
                  await api().memories.delete(memory.id, { group });
                  memories.reload();
                }}
              />
            </td>
          </tr>
        ))}
      </Table>
      <PagedFooter paged={memories} noun="memories" />
    </section>
  );
}
