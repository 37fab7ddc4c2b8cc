/** Organization API keys: create (the key is shown once) and revoke. */
import { useState } from 'preact/hooks';
import type { CreatedToken } from '../../../client/index';
import { api } from '../api';
import { ACTIONS, ConfirmButton, ErrorMessage, Loading, PageHeader, ShownOnce, Table, Time, useAction, useAsync } from '../components';

export function ApiKeysPage() {
  const tokens = useAsync(() => api().tokens.list(), []);
  const [created, setCreated] = useState<CreatedToken>();
  return (
    <>
      <PageHeader title="API keys" />
      <CreateKey
        onCreated={(token) => {
          setCreated(token);
          tokens.reload();
        }}
      />
      {created ? (
        <ShownOnce
          label="New API key"
          value={created.key}
          copyLabel="Copy key"
          testIds={{ section: 'created-key', value: 'created-key-value', copy: 'copy-key', dismiss: 'dismiss-key' }}
          onDismiss={() => setCreated(undefined)}
        >
          The key <strong>{created.name}</strong>. Copy it now: it is not shown again.
        </ShownOnce>
      ) : null}
      <ErrorMessage error={tokens.error} />
      {tokens.loading && !tokens.data ? <Loading /> : null}
      {tokens.data ? (
        tokens.data.tokens.length === 0 ? (
          <p class="empty">No API keys.</p>
        ) : (
          <Table testId="api-keys" columns={['Name', 'Key', 'Created', 'Last used', ACTIONS]}>
            {tokens.data.tokens.map((token) => (
              <tr key={token.id} data-testid="api-key-row" data-key-id={token.id}>
                <td>{token.name}</td>
                <td>
                  <code>{token.key_prefix}…</code>
                </td>
                <td>
                  <Time iso={token.created_at} />
                </td>
                <td>{token.last_used_at ? <Time iso={token.last_used_at} /> : 'never'}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    testId="revoke-key"
                    onConfirm={async () => {
                      await api().tokens.delete(token.id);
                      if (created?.id === token.id) setCreated(undefined);
                      tokens.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )
      ) : null}
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (token: CreatedToken) => void }) {
  const [name, setName] = useState('');
  const { busy, error, run: submit } = useAction(async () => {
    onCreated(await api().tokens.create({ name: name.trim() }));
    setName('');
  });
  return (
    <form class="inline-form" onSubmit={submit} aria-label="New API key">
      <label for="key-name">Name</label>
      <input id="key-name" data-testid="key-name" value={name} required maxLength={100} onInput={(event) => setName(event.currentTarget.value)} />
      <button type="submit" disabled={busy} data-testid="key-create">
        {busy ? 'Creating…' : 'Create key'}
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}
