// Signing in, and accepting an invitation (a new staff user chooses a password and is signed in).
import { useState } from 'preact/hooks';
import { sessions, type StaffSession } from '../api.js';
import { ErrorNote } from '../components.js';

function Card({ title, lead, children }: { title: string; lead: string; children: preact.ComponentChildren }) {
  return (
    <div class="auth">
      <div class="auth-card">
        <div class="brand brand-large">
          <span class="brand-mark" aria-hidden="true">%</span> Promotions
        </div>
        <h1>{title}</h1>
        <p class="muted">{lead}</p>
        {children}
      </div>
    </div>
  );
}

export function SignInPage({ onSignedIn }: { onSignedIn: (session: StaffSession) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await sessions.signIn(email, password));
    } catch (e) {
      setError(e);
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card title="Sign in" lead="Use the email and password of your staff account.">
      <form class="form" onSubmit={submit}>
        <label for="email">Email</label>
        <input id="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <ErrorNote error={error} />
        <button type="submit" class="button-primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </Card>
  );
}

export function AcceptInvitationPage({ token, onSignedIn }: { token: string; onSignedIn: (session: StaffSession) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      onSignedIn(await sessions.acceptInvitation(token, password, name || undefined));
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Card title="Accept your invitation" lead="Choose a password of at least 12 characters.">
      <form class="form" onSubmit={submit}>
        <label for="name">Name</label>
        <input id="name" autocomplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" type="password" autocomplete="new-password" minLength={12} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <ErrorNote error={error} />
        <button type="submit" class="button-primary">
          Accept invitation
        </button>
      </form>
    </Card>
  );
}
