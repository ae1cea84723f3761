// Webhooks: the endpoints (create with the signing secret shown once), and an endpoint's page: its deliveries with
// status, attempts, last response and next retry, a Replay per delivery, and secret rotation (new secret shown once).
import { useCallback, useState } from 'preact/hooks';
import type { EventType } from '../../../src/contract/event.schemas.js';
import { call } from '../api.js';
import { Badge, ErrorNote, Fact, Facts, formatTime, PagedTable, PageHeader, RefusedPage, SecretOnce, useLoad } from '../components.js';
import type { PageProps } from '../app.js';

// The types a subscriber usually picks; typed against the service's event list, so a renamed type fails the build.
const COMMON_EVENTS = [
  'voucher.redeemed',
  'voucher.redeemed.rolled_back',
  'voucher.stack.redeemed',
  'customer.created',
  'order.created',
  'order.paid',
  'voucher.published',
  'campaign.created',
  'voucher.created',
] as const satisfies readonly EventType[];

const STATUS_TONES = { delivered: 'good', dead: 'bad', pending: 'neutral', retry_scheduled: 'neutral' } as const;
const STATUS_LABELS = { delivered: 'Delivered', dead: 'Dead', pending: 'Pending', retry_scheduled: 'Retry scheduled' } as const;

function CreateEndpoint({ onCreated, onCancel }: { onCreated: (id: string, secret: string) => void; onCancel: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState<EventType[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const toggle = (type: EventType) => setEvents(events.includes(type) ? events.filter((e) => e !== type) : [...events, type]);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await call('webhooks.create', { url, events: all ? '*' : events, ...(description ? { description } : {}) });
      onCreated(created.id, created.secret);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form class="panel form form-grid" onSubmit={submit} aria-label="New webhook endpoint">
      <h2>New webhook endpoint</h2>
      <label for="webhook-url">URL</label>
      <input id="webhook-url" type="url" required placeholder="https://shop.example.com/hooks/promotions" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <label for="webhook-description">Description</label>
      <input id="webhook-description" maxLength={500} placeholder="optional" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <fieldset class="scopes">
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> All events, including types added later
        </label>
        {!all &&
          COMMON_EVENTS.map((type) => (
            <label class="check">
              <input type="checkbox" checked={events.includes(type)} onChange={() => toggle(type)} /> <code>{type}</code>
            </label>
          ))}
      </fieldset>
      <ErrorNote error={error} />
      <div class="form-actions">
        <button type="submit" class="button-primary" disabled={!all && events.length === 0}>
          Create endpoint
        </button>
        <button type="button" class="button-quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Endpoints({ can }: Pick<PageProps, 'can'>) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ id: string; secret: string } | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const load = useCallback((cursor: string | undefined) => call('webhooks.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Webhooks">
        {can('webhooks:write') && !creating && (
          <button class="button-primary" onClick={() => (setCreating(true), setCreated(undefined))}>
            New endpoint
          </button>
        )}
      </PageHeader>
      {created && (
        <SecretOnce title="Copy the signing secret now." value={created.secret} testId="new-secret" onDone={() => setCreated(undefined)} />
      )}
      {creating && (
        <CreateEndpoint
          onCancel={() => setCreating(false)}
          onCreated={(id, secret) => {
            setCreating(false);
            setCreated({ id, secret });
            setVersion((v) => v + 1);
          }}
        />
      )}
      <PagedTable
        label="Webhook endpoints"
        load={load}
        version={version}
        empty="No webhook endpoints yet. Add one to receive events, signed, at your URL."
        columns={[
          { label: 'URL', render: (w) => <a href={`#/webhooks/${w.id}`}><code>{w.url}</code></a> },
          { label: 'Events', render: (w) => (w.events === '*' ? 'All events' : w.events.join(', ')) },
          { label: 'Description', render: (w) => w.description ?? '—' },
          { label: 'Status', render: (w) => (w.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Inactive</Badge>) },
          { label: 'Created', render: (w) => formatTime(w.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

function Attempts({ webhookId, deliveryId }: { webhookId: string; deliveryId: string }) {
  const load = useCallback((cursor: string | undefined) => call('webhooks.listAttempts', { id: webhookId, deliveryId, limit: 10, ...(cursor ? { cursor } : {}) }), [webhookId, deliveryId]);
  return (
    <div class="attempts">
      <PagedTable
        label="Attempts"
        load={load}
        empty="No attempts yet."
        columns={[
          { label: '#', render: (a) => a.number },
          { label: 'Trigger', render: (a) => a.trigger },
          { label: 'Result', render: (a) => (a.succeeded ? <Badge tone="good">OK</Badge> : <Badge tone="bad">Failed</Badge>) },
          { label: 'Response', render: (a) => <Response status={a.responseStatus} body={a.responseBody} error={a.error} /> },
          { label: 'Took', render: (a) => `${a.durationMs} ms`, class: 'nowrap' },
          { label: 'When', render: (a) => formatTime(a.createdAt), class: 'nowrap' },
        ]}
      />
    </div>
  );
}

function Response({ status, body, error }: { status: number | null; body: string | null; error: string | null }) {
  if (status === null && !error) return <span class="muted">—</span>;
  return (
    <span class="response">
      {status !== null && <code class={status < 300 ? 'http-ok' : 'http-bad'}>{status}</code>}{' '}
      {error ? <span class="muted small">{error}</span> : body ? <span class="muted small" title={body}>{body.length > 60 ? body.slice(0, 60) + '…' : body}</span> : null}
    </span>
  );
}

function Endpoint({ id, can }: { id: string; can: PageProps['can'] }) {
  const endpoint = useLoad(() => call('webhooks.get', { id }), [id]);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const [replayed, setReplayed] = useState(0);
  const [underWay, setUnderWay] = useState(false);
  const load = useCallback((cursor: string | undefined) => call('webhooks.listDeliveries', { id, limit: 20, ...(cursor ? { cursor } : {}) }), [id]);
  const rotate = async () => {
    if (!confirm('Rotate the signing secret? The previous secret keeps signing beside the new one for 24 hours.')) return;
    try {
      const rotated = await call('webhooks.rotateSecret', { id });
      setSecret(rotated.secret);
      endpoint.reload();
    } catch (e) {
      setError(e);
    }
  };
  const replay = async (deliveryId: string) => {
    setBusy(true);
    try {
      await call('webhooks.replayDelivery', { id, deliveryId });
      // Watch the replay's outcome for a while: it is queued, then attempted by the worker.
      setReplayed((n) => n + 1);
      setTimeout(() => setReplayed((n) => n - 1), 20_000);
      setVersion((v) => v + 1);
      setError(undefined);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const w = endpoint.value;
  const watching = underWay || replayed > 0;
  return (
    <section>
      <PageHeader title="Webhook endpoint" back={{ href: '#/webhooks', label: 'Webhooks' }}>
        {can('webhooks:write') && w && (
          <button class="button-quiet" onClick={rotate}>
            Rotate secret
          </button>
        )}
      </PageHeader>
      <ErrorNote error={endpoint.error ?? error} />
      {secret && <SecretOnce title="Copy the new signing secret now." value={secret} testId="new-secret" onDone={() => setSecret(undefined)} />}
      {w && (
        <Facts>
          <Fact label="URL" wide><code>{w.url}</code></Fact>
          <Fact label="Events">{w.events === '*' ? 'All events' : w.events.join(', ')}</Fact>
          <Fact label="Status">{w.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Inactive</Badge>}</Fact>
          <Fact label="Secret rotated">
            {w.secretRotatedAt ? formatTime(w.secretRotatedAt) : 'Never'}
            {w.previousSecretExpiresAt && <span class="muted small">previous signs until {formatTime(w.previousSecretExpiresAt)}</span>}
          </Fact>
        </Facts>
      )}
      <div class="section-header">
        <h2>Deliveries</h2>
        <button class="button-quiet" onClick={() => setVersion((v) => v + 1)}>
          Refresh
        </button>
      </div>
      <PagedTable
        label="Deliveries"
        load={load}
        version={version}
        refreshMs={watching ? 1_500 : undefined}
        onLoaded={(page) => setUnderWay(page.data.some((d) => d.status === 'pending' || d.status === 'retry_scheduled'))}
        empty="No deliveries yet. Each event this endpoint subscribes to is delivered and listed here."
        columns={[
          { label: 'Event', render: (d) => <span><code>{d.eventType}</code><div class="muted small">{d.eventId.slice(0, 8)}…</div></span> },
          { label: 'Status', render: (d) => <Badge tone={STATUS_TONES[d.status]}>{STATUS_LABELS[d.status]}</Badge> },
          { label: 'Attempts', render: (d) => <button class="link" aria-label={`Attempts of ${d.id}`} onClick={() => setOpen(open === d.id ? undefined : d.id)}>{d.attempts}</button>, class: 'num' },
          { label: 'Last response', render: (d) => <Response status={d.responseStatus} body={d.responseBody} error={d.error} /> },
          { label: 'Last attempt', render: (d) => formatTime(d.lastAttemptAt), class: 'nowrap' },
          { label: 'Next retry', render: (d) => formatTime(d.nextRetryAt), class: 'nowrap' },
          {
            label: '',
            class: 'actions',
            render: (d) =>
              can('webhooks:write') ? (
                <button class="button-quiet" disabled={busy} onClick={() => replay(d.id)}>
                  Replay
                </button>
              ) : null,
          },
        ]}
      />
      {open && (
        <div class="settings-section">
          <div class="section-header">
            <h2>Attempts</h2>
            <button class="button-quiet" onClick={() => setOpen(undefined)}>
              Close
            </button>
          </div>
          <Attempts webhookId={id} deliveryId={open} />
        </div>
      )}
    </section>
  );
}

export function WebhooksPage({ can, route }: PageProps) {
  if (!can('webhooks:read')) return <RefusedPage title="Webhooks" what="webhooks" />;
  return route[1] ? <Endpoint key={route[1]} id={route[1]} can={can} /> : <Endpoints can={can} />;
}
