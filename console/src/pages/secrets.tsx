/** Secrets: names and masks; create, rotate and delete. A value is sent once and never shown. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ACTIONS, ConfirmButton, ErrorMessage, Loading, PageHeader, Table, useAction, useAsync } from '../components';

export function SecretsPage() {
  const secrets = useAsync(() => api().secrets.list(), []);
  const [notice, setNotice] = useState<string>();
  return (
    <>
      <PageHeader title="Secrets" />
      <p class="muted">Agents use a secret as <code>{'{{secret:NAME}}'}</code>. Values are never shown again after they are saved.</p>
      <CreateSecret
        onCreated={(name, masked) => {
          setNotice(`Saved ${name} (${masked}).`);
          secrets.reload();
        }}
      />
      {notice ? (
        <p class="notice" role="status" data-testid="secret-notice">
          {notice}
        </p>
      ) : null}
      <ErrorMessage error={secrets.error} />
      {secrets.loading && !secrets.data ? <Loading /> : null}
      {secrets.data ? (
        secrets.data.secrets.length === 0 ? (
          <p class="empty">No secrets.</p>
        ) : (
          <Table testId="secrets" columns={['Name', 'Value', ACTIONS]}>
            {secrets.data.secrets.map((secret) => (
              <tr key={secret.name} data-testid="secret-row" data-secret-name={secret.name}>
                <td>
                  <code>{secret.name}</code>
                </td>
                <td>
                  <code data-testid="secret-mask">{secret.masked_value}</code>
                </td>
                <td class="row-actions">
                  <RotateSecret
                    name={secret.name}
                    onRotated={(masked) => {
                      setNotice(`Rotated ${secret.name} (${masked}).`);
                      secrets.reload();
                    }}
                  />
                  <ConfirmButton
                    label="Delete"
                    testId="delete-secret"
                    onConfirm={async () => {
                      await api().secrets.delete(secret.name);
                      setNotice(`Deleted ${secret.name}.`);
                      secrets.reload();
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

function CreateSecret({ onCreated }: { onCreated: (name: string, masked: string) => void }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const { busy, error, run: submit } = useAction(async () => {
    const created = await api().secrets.create({ name: name.trim(), value });
    // The value leaves the page with the request: nothing keeps or shows it.
    setName('');
    setValue('');
    onCreated(created.name, created.masked_value);
  });
  return (
    <form class="inline-form" onSubmit={submit} aria-label="New secret" data-testid="create-secret">
      <label for="secret-name">Name</label>
      <input id="secret-name" data-testid="secret-name" value={name} required maxLength={128} pattern="[A-Za-z0-9_.\-]{1,128}" autoComplete="off" onInput={(event) => setName(event.currentTarget.value)} />
      <label for="secret-value">Value</label>
      <input id="secret-value" data-testid="secret-value" type="password" value={value} required autoComplete="new-password" onInput={(event) => setValue(event.currentTarget.value)} />
      <button type="submit" disabled={busy} data-testid="secret-create">
        {busy ? 'Saving…' : 'Create'}
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

function RotateSecret({ name, onRotated }: { name: string; onRotated: (masked: string) => void }) {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState('');
  const { busy, error, run: submit } = useAction(async () => {
    const rotated = await api().secrets.update(name, { value });
    setValue('');
    setOpen(false);
    onRotated(rotated.masked_value);
  });
  if (!open) {
    return (
      <button type="button" class="secondary small" data-testid="rotate-secret" onClick={() => setOpen(true)}>
        Rotate
      </button>
    );
  }
  const inputId = `rotate-${name}`;
  return (
    <form class="inline-form" onSubmit={submit} aria-label={`Rotate ${name}`}>
      <label for={inputId}>New value</label>
      <input id={inputId} data-testid="rotate-value" type="password" value={value} required autoComplete="new-password" autoFocus onInput={(event) => setValue(event.currentTarget.value)} />
      <button type="submit" class="small" disabled={busy} data-testid="rotate-save">
        Save
      </button>
      <button
        type="button"
        class="secondary small"
        onClick={() => {
          setValue('');
          setOpen(false);
        }}
      >
        Cancel
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}
