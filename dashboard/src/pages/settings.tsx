// Settings: API keys (create with chosen scopes, the plaintext shown once, revoke, last used), staff users and
// invitations, and the workspace (name, time zone, stack limit, default currency). Each part only for roles that may see it.
import { useCallback, useState } from 'preact/hooks';
import { ALL_SCOPES, type Scope } from '../../../src/contract/scopes.js';
import { call } from '../api.js';
import { Badge, ErrorNote, formatTime, PageHeader, PagedTable, useLoad } from '../components.js';
import type { PageProps } from '../app.js';

function CreateKey({ grantable, onDone }: { grantable: Scope[]; onDone: (plaintext: string | undefined) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const toggle = (scope: Scope) => setScopes(scopes.includes(scope) ? scopes.filter((s) => s !== scope) : [...scopes, scope]);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await call('apiKeys.create', { name, scopes: scopes as never });
      onDone(created.key);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form class="panel form" onSubmit={submit} aria-label="New API key">
      <h2>New API key</h2>
      <label for="key-name">Name</label>
      <input id="key-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <fieldset class="scopes">
        <legend>Scopes</legend>
        {grantable.map((scope) => (
          <label class="check">
            <input type="checkbox" checked={scopes.includes(scope)} onChange={() => toggle(scope)} /> <code>{scope}</code>
          </label>
        ))}
      </fieldset>
      <ErrorNote error={error} />
      <div class="form-actions">
        <button type="submit" class="button-primary" disabled={scopes.length === 0}>
          Create key
        </button>
        <button type="button" class="button-quiet" onClick={() => onDone(undefined)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function ApiKeys({ can }: Pick<PageProps, 'can'>) {
  const [creating, setCreating] = useState(false);
  const [plaintext, setPlaintext] = useState<string | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<unknown>(undefined);
  const load = useCallback((cursor: string | undefined) => call('apiKeys.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  const grantable = ALL_SCOPES.filter((s) => s !== 'workspaces:admin' && can(s));
  const revoke = async (id: string, name: string) => {
    if (!confirm(`Revoke the key “${name}”? Calls with it fail from now on.`)) return;
    try {
      await call('apiKeys.revoke', { id });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="settings-section">
      <div class="section-header">
        <h2>API keys</h2>
        {can('api-keys:write') && !creating && (
          <button class="button-primary" onClick={() => (setCreating(true), setPlaintext(undefined))}>
            Create API key
          </button>
        )}
      </div>
      {plaintext && (
        <div class="panel secret" role="status">
          <p>
            <strong>Copy the key now.</strong> It is shown this once and cannot be read again.
          </p>
          <code class="secret-value" data-testid="new-key">
            {plaintext}
          </code>
          <div class="form-actions">
            <button class="button-quiet" onClick={() => void navigator.clipboard?.writeText(plaintext)}>
              Copy
            </button>
            <button class="button-quiet" onClick={() => setPlaintext(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {creating && (
        <CreateKey
          grantable={grantable}
          onDone={(key) => {
            setCreating(false);
            setPlaintext(key);
            setVersion((v) => v + 1);
          }}
        />
      )}
      <ErrorNote error={error} />
      <PagedTable
        label="API keys"
        load={load}
        version={version}
        empty="No API keys yet."
        columns={[
          { label: 'Name', render: (k) => <strong>{k.name}</strong> },
          { label: 'Prefix', render: (k) => <code>{k.prefix}</code> },
          { label: 'Scopes', render: (k) => <span class="scopes-list">{k.scopes.join(', ')}</span> },
          { label: 'Last used', render: (k) => (k.lastUsedAt ? formatTime(k.lastUsedAt) : 'Never'), class: 'nowrap' },
          { label: 'Created', render: (k) => formatTime(k.createdAt), class: 'nowrap' },
          {
            label: '',
            class: 'actions',
            render: (k) =>
              can('api-keys:write') ? (
                <button class="button-danger" onClick={() => revoke(k.id, k.name)}>
                  Revoke
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}

const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

function StaffUsers({ can, session }: Pick<PageProps, 'can' | 'session'>) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<(typeof ROLES)[number]>('member');
  const [link, setLink] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [version, setVersion] = useState(0);
  const load = useCallback((cursor: string | undefined) => call('staffUsers.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  const invite = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await call('staffInvitations.create', { email, role });
      setLink(created.link.startsWith('/') ? location.origin + created.link : created.link);
      setEmail('');
      setError(undefined);
    } catch (e) {
      setError(e);
    }
  };
  const remove = async (id: string, who: string) => {
    if (!confirm(`Remove ${who}? Their sessions end at once.`)) return;
    try {
      await call('staffUsers.delete', { id });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="settings-section">
      <div class="section-header">
        <h2>Staff users</h2>
      </div>
      {can('workspaces:write') && (
        <form class="panel inline-form" onSubmit={invite} aria-label="Invite a staff user">
          <label for="invite-email">Email</label>
          <input id="invite-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          <label for="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as (typeof ROLES)[number])}>
            {ROLES.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
          <button type="submit" class="button-primary">
            Invite
          </button>
        </form>
      )}
      {link && (
        <div class="panel secret" role="status">
          <p>
            <strong>Send this link to the new staff user.</strong> It works once and is shown only now.
          </p>
          <code class="secret-value">{link}</code>
        </div>
      )}
      <ErrorNote error={error} />
      <PagedTable
        label="Staff users"
        load={load}
        version={version}
        empty="No staff users."
        columns={[
          { label: 'Email', render: (u) => u.email },
          { label: 'Name', render: (u) => u.name ?? '—' },
          { label: 'Role', render: (u) => <Badge tone={u.role === 'owner' ? 'good' : 'neutral'}>{u.role}</Badge> },
          { label: 'Since', render: (u) => formatTime(u.createdAt), class: 'nowrap' },
          {
            label: '',
            class: 'actions',
            render: (u) =>
              can('workspaces:write') && u.id !== session.staffUser.id ? (
                <button class="button-danger" onClick={() => remove(u.id, u.email)}>
                  Remove
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}

const CURRENCY_HINT = 'Money in a campaign or voucher that names no currency is counted in this one (three letters, e.g. EUR)';

interface WorkspaceDraft {
  name: string;
  timeZone: string;
  stackLimit: string;
  defaultCurrency: string;
}

function WorkspaceSettings({ can }: Pick<PageProps, 'can'>) {
  const workspace = useLoad(() => call('workspaces.current', {}), []);
  const [draft, setDraft] = useState<WorkspaceDraft | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const w = workspace.value;
  const form = draft ?? (w ? { name: w.name, timeZone: w.timeZone, stackLimit: String(w.stackLimit), defaultCurrency: w.defaultCurrency ?? '' } : undefined);
  const writable = can('workspaces:write');
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!form) return;
    const defaultCurrency = form.defaultCurrency.trim().toUpperCase();
    if (!defaultCurrency && w?.defaultCurrency) return setError(new Error('The default currency can be changed, not removed: campaigns may rely on it.'));
    try {
      await call('workspaces.update', { name: form.name, timeZone: form.timeZone, stackLimit: Number(form.stackLimit), ...(defaultCurrency ? { defaultCurrency } : {}) });
      setDraft(undefined);
      setSaved(true);
      setError(undefined);
      workspace.reload();
    } catch (e) {
      setError(e);
    }
  };
  const edit = (key: keyof WorkspaceDraft, value: string) => (setSaved(false), setDraft({ ...form!, [key]: value }));
  return (
    <section class="settings-section">
      <div class="section-header">
        <h2>Workspace</h2>
      </div>
      <ErrorNote error={workspace.error} />
      {form && (
        <form class="panel inline-form" onSubmit={submit} aria-label="Workspace settings">
          <label for="workspace-name">Workspace name</label>
          <input id="workspace-name" required maxLength={200} disabled={!writable} value={form.name} onInput={(e) => edit('name', e.currentTarget.value)} />
          <label for="workspace-tz">Time zone</label>
          <input id="workspace-tz" required disabled={!writable} placeholder="Europe/Berlin" value={form.timeZone} onInput={(e) => edit('timeZone', e.currentTarget.value)} />
          <label for="workspace-stack">Vouchers per stack</label>
          <input id="workspace-stack" class="narrow" type="number" min={1} max={30} required disabled={!writable} value={form.stackLimit} onInput={(e) => edit('stackLimit', e.currentTarget.value)} />
          <label for="workspace-currency">Default currency</label>
          <input id="workspace-currency" class="narrow" maxLength={3} placeholder="none" title={CURRENCY_HINT} disabled={!writable} value={form.defaultCurrency} onInput={(e) => edit('defaultCurrency', e.currentTarget.value)} />
          {writable && (
            <button type="submit" class="button-primary" disabled={!draft}>
              Save workspace
            </button>
          )}
          {saved && <span class="muted small" role="status">Saved.</span>}
          <ErrorNote error={error} />
        </form>
      )}
    </section>
  );
}

export function SettingsPage({ can, session }: PageProps) {
  return (
    <section>
      <PageHeader title="Settings" />
      <div class="panel workspace-facts">
        <div>
          <span class="muted small">Workspace</span>
          <code>{session.staffUser.workspaceId}</code>
        </div>
        <div>
          <span class="muted small">Signed in as</span>
          {session.staffUser.email} ({session.staffUser.role})
        </div>
      </div>
      {can('api-keys:read') ? <ApiKeys can={can} /> : <p class="note">Your role cannot see API keys.</p>}
      {can('workspaces:read') && <WorkspaceSettings can={can} />}
      {can('workspaces:read') && <StaffUsers can={can} session={session} />}
    </section>
  );
}
