// The dashboard shell: who is signed in (the cookie session, asked of the service), the hash route, the navigation
// naming every page, and the page itself. Signed out (or the session ended), the sign-in page.
import { useEffect, useState } from 'preact/hooks';
import { hasScope, type Scope } from '../../src/contract/scopes.js';
import { messageOf, sessions, whenSignedOut, type StaffSession } from './api.js';
import { AcceptInvitationPage, SignInPage } from './pages/sign-in.js';
import { AuditLogPage } from './pages/audit-log.js';
import { CampaignsPage } from './pages/campaigns.js';
import { CustomersPage } from './pages/customers.js';
import { LoyaltyPage } from './pages/loyalty.js';
import { OrdersPage } from './pages/orders.js';
import { Placeholder } from './pages/placeholder.js';
import { ReferralsPage } from './pages/referrals.js';
import { RedemptionsPage } from './pages/redemptions.js';
import { SettingsPage } from './pages/settings.js';
import { VouchersPage } from './pages/vouchers.js';
import { WebhooksPage } from './pages/webhooks.js';
import { go, PAGES, routeOf } from './routes.js';

export interface PageProps {
  session: StaffSession;
  /** Whether the signed-in role holds a scope: the UI hides what the server would refuse. */
  can: (scope: Scope) => boolean;
  route: string[];
}

type PageComponent = (props: PageProps) => preact.JSX.Element;
let insightsPage: Promise<PageComponent> | undefined;

/** Insights (and uPlot with it) is a chunk of its own, fetched on the first visit. */
function LazyInsights(props: PageProps) {
  const [page, setPage] = useState<{ component: PageComponent } | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    insightsPage ??= import('./pages/insights.js').then((m) => m.InsightsPage);
    insightsPage.then((component) => setPage({ component })).catch((e: unknown) => ((insightsPage = undefined), setError(e)));
  }, []);
  if (error) return <Placeholder title="Insights" text={`The page could not be loaded: ${messageOf(error)}`} />;
  return page ? <page.component {...props} /> : <div class="muted">Loading…</div>;
}

function Page(props: PageProps) {
  switch (props.route[0] ?? 'campaigns') {
    case 'campaigns':
      return <CampaignsPage {...props} />;
    case 'vouchers':
      return <VouchersPage {...props} />;
    case 'customers':
      return <CustomersPage {...props} />;
    case 'orders':
      return <OrdersPage {...props} />;
    case 'redemptions':
      return <RedemptionsPage {...props} />;
    case 'webhooks':
      return <WebhooksPage {...props} />;
    case 'loyalty':
      return <LoyaltyPage {...props} />;
    case 'referrals':
      return <ReferralsPage {...props} />;
    case 'insights':
      return <LazyInsights {...props} />;
    case 'audit-log':
      return <AuditLogPage {...props} />;
    case 'settings':
      return <SettingsPage {...props} />;
    default:
      return <Placeholder title="Not found" text="There is no such page." />;
  }
}

function Shell({ session, route, onSignOut }: { session: StaffSession; route: string[]; onSignOut: () => void }) {
  const [error, setError] = useState<unknown>(undefined);
  const current = route[0] ?? 'campaigns';
  const can = (scope: Scope) => hasScope(session.staffUser.scopes, scope);
  const signOut = async () => {
    try {
      await sessions.signOut();
      onSignOut();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="shell">
      <aside class="sidebar">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">%</span> Promotions
        </div>
        <nav aria-label="Main">
          <ul>
            {PAGES.map((page) => (
              <li>
                <a href={`#/${page.path}`} class={current === page.path ? 'active' : undefined} aria-current={current === page.path ? 'page' : undefined}>
                  {page.name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <div class="who-email" title={session.staffUser.email}>
            {session.staffUser.name ?? session.staffUser.email}
          </div>
          <div class="who-role">{session.staffUser.role}</div>
          <button class="button-quiet" onClick={signOut}>
            Sign out
          </button>
          {error ? <p class="note note-error">{messageOf(error)}</p> : null}
        </div>
      </aside>
      <main class="content">
        <Page session={session} can={can} route={route} />
      </main>
    </div>
  );
}

export function App() {
  const [session, setSession] = useState<StaffSession | null | undefined>(undefined);
  const [route, setRoute] = useState(routeOf(location.hash));

  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', follow);
    whenSignedOut(() => setSession(null));
    sessions
      .current()
      .then(setSession)
      .catch(() => setSession(null));
    return () => removeEventListener('hashchange', follow);
  }, []);

  if (route[0] === 'accept-invitation') {
    return <AcceptInvitationPage token={route[1] ?? ''} onSignedIn={(s) => (setSession(s), go('campaigns'))} />;
  }
  if (session === undefined) return <div class="splash">Loading…</div>;
  if (session === null) return <SignInPage onSignedIn={setSession} />;
  return <Shell session={session} route={route} onSignOut={() => setSession(null)} />;
}
