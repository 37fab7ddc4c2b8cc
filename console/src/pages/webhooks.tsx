/**
 * Webhooks: create (the signing secret is shown once), delete, and each one's delivery
 * attempts; and the OTLP export's settings, whose header values are shown as stored
 * (secret references, never resolved).
 */
import { useState } from 'preact/hooks';
import { NotFoundError, type CreatedWebhook, type OtlpSettings, type Webhook, type WebhookDelivery, type WebhookEventType } from '../../../client/index';
import { api } from '../api';
import { ACTIONS, ConfirmButton, ErrorMessage, Loading, PagedFooter, PageHeader, ShownOnce, Table, Time, useAction, useAsync, usePaged } from '../components';
import { Link, to } from '../router';

const EVENT_TYPES: WebhookEventType[] = ['invocation.succeeded', 'invocation.failed'];

export function WebhooksPage() {
  const webhooks = useAsync(() => api().webhooks.list(), []);
  const [created, setCreated] = useState<CreatedWebhook>();
  const [shown, setShown] = useState<string>();
  const shownWebhook = webhooks.data?.webhooks.find((webhook) => webhook.id === shown);
  return (
    <>
      <PageHeader title="Webhooks" />
      <p class="muted">
        Each webhook is sent the outcome of every invocation, signed as the Standard Webhooks specification says with the webhook's own secret.
      </p>
      <CreateWebhook
        onCreated={(webhook) => {
          setCreated(webhook);
          webhooks.reload();
        }}
      />
      {created ? (
        <ShownOnce
          label="New webhook's signing secret"
          value={created.secret}
          copyLabel="Copy secret"
          testIds={{ section: 'created-webhook', value: 'created-webhook-secret', copy: 'copy-webhook-secret', dismiss: 'dismiss-webhook-secret' }}
          onDismiss={() => setCreated(undefined)}
        >
          The signing secret of the webhook to <strong>{created.url}</strong>. Copy it now: it is not shown again. The receiver checks each delivery's{' '}
          <code>webhook-signature</code> with it.
        </ShownOnce>
      ) : null}
      <ErrorMessage error={webhooks.error} />
      {webhooks.loading && !webhooks.data ? <Loading /> : null}
      {webhooks.data ? (
        webhooks.data.webhooks.length === 0 ? (
          <p class="empty">No webhooks.</p>
        ) : (
          <Table testId="webhooks" columns={['URL', 'Events', 'Created', ACTIONS]}>
            {webhooks.data.webhooks.map((webhook) => (
              <tr key={webhook.id} data-testid="webhook-row" data-webhook-id={webhook.id}>
                <td>
                  <code>{webhook.url}</code>
                </td>
                <td>{webhook.events.join(', ')}</td>
                <td>
                  <Time iso={webhook.created_at} />
                </td>
                <td class="row-actions">
                  <button type="button" class="secondary small" data-testid="show-deliveries" aria-pressed={shown === webhook.id} onClick={() => setShown(shown === webhook.id ? undefined : webhook.id)}>
                    Deliveries
                  </button>
                  <ConfirmButton
                    label="Delete"
                    testId="delete-webhook"
                    onConfirm={async () => {
                      await api().webhooks.delete(webhook.id);
                      if (created?.id === webhook.id) setCreated(undefined);
                      webhooks.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )
      ) : null}
      {shownWebhook ? <Deliveries key={shownWebhook.id} webhook={shownWebhook} /> : null}
      <OtlpExport />
    </>
  );
}

function CreateWebhook({ onCreated }: { onCreated: (webhook: CreatedWebhook) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>(EVENT_TYPES);
  const { busy, error, run: submit } = useAction(async () => {
    onCreated(await api().webhooks.create({ url: url.trim(), events }));
    setUrl('');
  });
  const toggle = (type: WebhookEventType, on: boolean) => setEvents((current) => EVENT_TYPES.filter((known) => (known === type ? on : current.includes(known))));
  return (
    <form class="inline-form" onSubmit={submit} aria-label="New webhook" data-testid="create-webhook">
      <label for="webhook-url">URL</label>
      <input id="webhook-url" data-testid="webhook-url" type="url" value={url} required placeholder="https://example.com/hooks" onInput={(event) => setUrl(event.currentTarget.value)} />
      {EVENT_TYPES.map((type) => (
        <label key={type}>
          <input type="checkbox" data-testid={`webhook-event-${type}`} checked={events.includes(type)} onChange={(event) => toggle(type, event.currentTarget.checked)} /> {type}
        </label>
      ))}
      <button type="submit" disabled={busy || events.length === 0} data-testid="webhook-create">
        {busy ? 'Creating…' : 'Create webhook'}
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

/** What one attempt got: the receiver's status, or why there was none. */
function DeliveryResult({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.status_code === undefined) return <span class="status-failed">{delivery.error ?? 'no answer'}</span>;
  const ok = delivery.status_code >= 200 && delivery.status_code < 300;
  return <span class={ok ? 'status-succeeded' : 'status-failed'}>{delivery.status_code}</span>;
}

function Deliveries({ webhook }: { webhook: Webhook }) {
  const deliveries = usePaged(async (after) => {
    const page = await api().webhooks.deliveries(webhook.id, after ? { after } : {});
    return { items: page.deliveries, next: page.next_cursor };
  }, [webhook.id]);
  return (
    <section aria-label={`Deliveries to ${webhook.url}`} data-testid="deliveries">
      <div class="section-header">
        <h2>
          Deliveries to <code>{webhook.url}</code>
        </h2>
        <button type="button" class="secondary small" data-testid="reload-deliveries" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <Table testId="deliveries-table" columns={['Time', 'Event', 'Invocation', 'Type', 'Attempt', 'Result']}>
        {deliveries.items.map((delivery) => (
          <tr key={`${delivery.event_id}.${delivery.attempt}`} data-testid="delivery-row">
            <td>
              <Time iso={delivery.time} />
            </td>
            <td>
              <code>{delivery.event_id}</code>
            </td>
            <td>
              <Link href={to('traces', delivery.invocation_key)}>{delivery.invocation_key}</Link>
            </td>
            <td>{delivery.type}</td>
            <td class="number">{delivery.attempt}</td>
            <td data-testid="delivery-result">
              <DeliveryResult delivery={delivery} />
            </td>
          </tr>
        ))}
      </Table>
      <PagedFooter paged={deliveries} noun="deliveries" />
    </section>
  );
}

/** The settings, or null while there are none. */
async function loadOtlp(): Promise<OtlpSettings | null> {
  try {
    return await api().integrations.otlp.get();
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

function OtlpExport() {
  const settings = useAsync(loadOtlp, []);
  const [editing, setEditing] = useState(false);
  const current = settings.data ?? undefined;
  return (
    <section aria-labelledby="otlp-title" data-testid="otlp">
      <div class="section-header">
        <h2 id="otlp-title">OTLP export</h2>
        {settings.data !== undefined && !editing ? (
          <span class="row-actions">
            <button type="button" class="secondary small" data-testid="edit-otlp" onClick={() => setEditing(true)}>
              {current ? 'Edit' : 'Set up'}
            </button>
            {current ? (
              <ConfirmButton
                label="Delete"
                testId="delete-otlp"
                onConfirm={async () => {
                  await api().integrations.otlp.delete();
                  settings.reload();
                }}
              />
            ) : null}
          </span>
        ) : null}
      </div>
      <p class="muted">Every finished invocation is also sent as one OTLP trace to an OTLP/HTTP traces endpoint.</p>
      <ErrorMessage error={settings.error} />
      {settings.loading && settings.data === undefined ? <Loading /> : null}
      {settings.data === null && !editing ? <p class="empty">Not set up.</p> : null}
      {current && !editing ? (
        <dl class="facts" data-testid="otlp-settings">
          <dt>Endpoint</dt>
          <dd>
            <code data-testid="otlp-endpoint">{current.endpoint}</code>
          </dd>
          <dt>Headers</dt>
          <dd data-testid="otlp-headers">
            {Object.keys(current.headers ?? {}).length === 0
              ? 'none'
              : Object.entries(current.headers ?? {}).map(([name, value]) => (
                  <div key={name}>
                    <code>
                      {name}: {value}
                    </code>
                  </div>
                ))}
          </dd>
          <dt>Payloads</dt>
          <dd data-testid="otlp-payloads">{current.payloads ? 'on: spans carry their redacted input and output' : 'off'}</dd>
        </dl>
      ) : null}
      {editing ? (
        <OtlpForm
          initial={current}
          onDone={(saved) => {
            setEditing(false);
            if (saved) settings.reload();
          }}
        />
      ) : null}
    </section>
  );
}

/** `Name: value` lines as headers; throws on a line without a name. */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n').map((item) => item.trim()).filter(Boolean)) {
    const at = line.indexOf(':');
    const name = line.slice(0, at).trim();
    if (at < 0 || !name) throw new Error(`"${line}" is not a header: write one "Name: value" a line.`);
    headers[name] = line.slice(at + 1).trim();
  }
  return headers;
}

function OtlpForm({ initial, onDone }: { initial: OtlpSettings | undefined; onDone: (saved: boolean) => void }) {
  const [endpoint, setEndpoint] = useState(initial?.endpoint ?? '');
  const [headers, setHeaders] = useState(Object.entries(initial?.headers ?? {}).map(([name, value]) => `${name}: ${value}`).join('\n'));
  const [payloads, setPayloads] = useState(initial?.payloads ?? false);
  const { busy, error, run: submit } = useAction(async () => {
    const parsed = parseHeaders(headers);
    await api().integrations.otlp.set({ endpoint: endpoint.trim(), ...(Object.keys(parsed).length ? { headers: parsed } : {}), payloads });
    onDone(true);
  });
  return (
    <form class="inline-form" onSubmit={submit} aria-label="OTLP export" data-testid="otlp-form">
      <label for="otlp-endpoint">Endpoint</label>
      <input id="otlp-endpoint" data-testid="otlp-endpoint-input" type="url" value={endpoint} required placeholder="https://collector.example.com/v1/traces" onInput={(event) => setEndpoint(event.currentTarget.value)} />
      <label for="otlp-headers">Headers</label>
      <textarea id="otlp-headers" data-testid="otlp-headers-input" rows={3} value={headers} placeholder={'Authorization: Bearer {{secret:OTLP_TOKEN}}'} onInput={(event) => setHeaders(event.currentTarget.value)} />
      <label>
        <input type="checkbox" data-testid="otlp-payloads-input" checked={payloads} onChange={(event) => setPayloads(event.currentTarget.checked)} /> Payloads
      </label>
      <button type="submit" disabled={busy} data-testid="otlp-save">
        {busy ? 'Saving…' : 'Save'}
      </button>
      <button type="button" class="secondary" disabled={busy} onClick={() => onDone(false)}>
        Cancel
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}
