// Loyalty: the programs, a program's members, tiers and offered rewards, and a member's ledger with a form to add or
// take points by hand (ADJUSTMENT). Routes: #/loyalty, #/loyalty/<programId>, #/loyalty/members/<memberId>.
import { useCallback, useState } from 'preact/hooks';
import { ApiError, call, messageOf } from '../api.js';
import { ActiveBadge, AnswerNote, ErrorNote, Fact, Facts, formatTime, PagedTable, PageHeader, RefusedPage, useLoad, type FormAnswer } from '../components.js';
import type { PageProps } from '../app.js';

/** An idempotency key; getRandomValues, unlike randomUUID, works outside secure contexts too (plain http on a LAN). */
const newKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
const points = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toLocaleString());

function Programs() {
  const load = useCallback((cursor: string | undefined) => call('campaigns.list', { type: 'LOYALTY_PROGRAM', limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Loyalty" />
      <PagedTable
        label="Loyalty programs"
        load={load}
        empty="No loyalty programs yet. Create a campaign of type LOYALTY_PROGRAM."
        columns={[
          { label: 'Program', render: (c) => <a href={`#/loyalty/${c.id}`}>{c.name}</a> },
          { label: 'Pay with points', render: (c) => (c.loyalty?.payWithPoints ? `${c.loyalty.payWithPoints.pointValue.points} pts = ${c.loyalty.payWithPoints.pointValue.amount}` : '—') },
          { label: 'Expiry', render: (c) => (c.loyalty?.expiration ? `${c.loyalty.expiration.type}${c.loyalty.expiration.days ? ` ${c.loyalty.expiration.days} d` : ''}` : 'never') },
          { label: 'Status', render: (c) => <ActiveBadge active={c.active} /> },
          { label: 'Created', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

function Program({ id }: { id: string }) {
  const program = useLoad(() => call('campaigns.get', { id }), [id]);
  const tiers = useLoad(() => call('loyalty.listTiers', { id }), [id]);
  const members = useCallback((cursor: string | undefined) => call('loyalty.listMembers', { id, limit: 20, ...(cursor ? { cursor } : {}) }), [id]);
  const rewards = useCallback((cursor: string | undefined) => call('loyalty.listProgramRewards', { id, limit: 10, ...(cursor ? { cursor } : {}) }), [id]);
  return (
    <section>
      <PageHeader title={program.value?.name ?? 'Program'} back={{ href: '#/loyalty', label: 'Loyalty' }} />
      <ErrorNote error={program.error ?? tiers.error} />
      {tiers.value && (
        <Facts label="Tiers">
          {tiers.value.data.length === 0 && <div class="muted">No tiers.</div>}
          {tiers.value.data.map((t) => (
            <Fact label={t.name}>
              from {points(t.minPoints)} pts, ×{t.multiplier}
            </Fact>
          ))}
        </Facts>
      )}
      <div class="settings-section">
        <h2>Members</h2>
        <PagedTable
          label="Members"
          load={members}
          empty="No members yet."
          columns={[
            { label: 'Card', render: (m) => <a href={`#/loyalty/members/${m.id}`}><code>{m.code}</code></a> },
            { label: 'Balance', render: (m) => points(m.balance), class: 'num' },
            { label: 'Pending', render: (m) => points(m.pendingBalance), class: 'num' },
            { label: 'Lifetime', render: (m) => points(m.lifetimeEarned), class: 'num' },
            { label: 'Tier', render: (m) => m.tier?.name ?? '—' },
            { label: 'Since', render: (m) => formatTime(m.createdAt), class: 'nowrap' },
          ]}
        />
      </div>
      <div class="settings-section">
        <h2>Rewards offered</h2>
        <PagedTable
          label="Rewards offered"
          load={rewards}
          empty="This program offers no rewards."
          columns={[
            { label: 'Reward', render: (o) => o.reward.name },
            { label: 'Kind', render: (o) => o.reward.type },
            { label: 'Price', render: (o) => `${points(o.points)} pts`, class: 'num' },
            { label: 'Stock', render: (o) => (o.reward.stock === null ? 'unlimited' : points(o.reward.stock)), class: 'num' },
          ]}
        />
      </div>
    </section>
  );
}

/**
 * Adds or takes points by hand (an ADJUSTMENT entry). A submission keeps its idempotency key until the service has
 * answered it, so a resend after a lost answer counts once; the next submission gets a new key.
 */
function AdjustPoints({ memberId, onDone }: { memberId: string; onDone: () => void }) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [answer, setAnswer] = useState<FormAnswer | undefined>(undefined);
  const [idempotencyKey, setIdempotencyKey] = useState(newKey);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const value = Number(amount.trim().replace('−', '-'));
    if (!amount.trim() || !Number.isSafeInteger(value) || value === 0) return setAnswer({ tone: 'bad', text: 'Points: a whole number other than 0 (negative to take points).' });
    setBusy(true);
    try {
      const outcome = await call('loyalty.adjustPoints', { id: memberId, points: value, idempotencyKey, ...(reason.trim() ? { reason: reason.trim() } : {}) });
      setIdempotencyKey(newKey());
      if (!outcome.ok) return setAnswer({ tone: 'bad', text: outcome.message ?? outcome.code ?? 'Refused.' });
      setAmount('');
      setReason('');
      setAnswer({ tone: 'good', text: `Done: the balance is ${points(outcome.member?.balance)} points.` });
      onDone();
    } catch (error) {
      if (error instanceof ApiError) setIdempotencyKey(newKey());
      setAnswer({ tone: 'bad', text: messageOf(error) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel inline-form" aria-label="Adjust points" onSubmit={(e) => void submit(e)}>
      <label for="adjust-points">Points</label>
      <input id="adjust-points" placeholder="+50 or -20" inputMode="numeric" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
      <label for="adjust-reason">Reason</label>
      <input id="adjust-reason" placeholder="service recovery" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <button type="submit" class="button-primary" disabled={busy}>
        Adjust points
      </button>
      <AnswerNote answer={answer} />
    </form>
  );
}

function Member({ id, can }: { id: string; can: PageProps['can'] }) {
  const [version, setVersion] = useState(0);
  const member = useLoad(() => call('loyalty.getMember', { id }), [id, version]);
  const entries = useCallback((cursor: string | undefined) => call('loyalty.listTransactions', { id, limit: 20, ...(cursor ? { cursor } : {}) }), [id]);
  const m = member.value;
  return (
    <section>
      <PageHeader title={m ? `Card ${m.code}` : 'Member'} back={m ? { href: `#/loyalty/${m.programId}`, label: 'Program' } : { href: '#/loyalty', label: 'Loyalty' }} />
      <ErrorNote error={member.error} />
      {m && (
        <Facts label="Member">
          <Fact label="Balance">{points(m.balance)} pts</Fact>
          <Fact label="Pending">{points(m.pendingBalance)} pts</Fact>
          <Fact label="Lifetime earned">{points(m.lifetimeEarned)} pts</Fact>
          <Fact label="Tier">{m.tier?.name ?? '—'}</Fact>
          <Fact label="Customer">{m.customerId ? <a href={`#/customers/${m.customerId}`}>{m.customerId.slice(0, 8)}…</a> : '—'}</Fact>
          <Fact label="Next to expire">{m.expiring.length ? `${points(m.expiring[0]!.points)} pts on ${formatTime(m.expiring[0]!.date)}` : '—'}</Fact>
        </Facts>
      )}
      {can('loyalty:write') && <AdjustPoints memberId={id} onDone={() => setVersion((v) => v + 1)} />}
      <div class="settings-section">
        <h2>Ledger</h2>
        <PagedTable
          label="Ledger"
          load={entries}
          version={version}
          empty="No points yet."
          columns={[
            { label: 'Type', render: (e) => e.type },
            { label: 'Points', render: (e) => (e.amount > 0 ? `+${points(e.amount)}` : points(e.amount)), class: 'num' },
            { label: 'Pending', render: (e) => (e.pendingAmount ? points(e.pendingAmount) : ''), class: 'num' },
            { label: 'Balance after', render: (e) => points(e.balanceAfter), class: 'num' },
            { label: 'Source', render: (e) => e.reason ?? e.source.type },
            { label: 'Expires', render: (e) => (e.expiresAt ? formatTime(e.expiresAt) : ''), class: 'nowrap' },
            { label: 'When', render: (e) => formatTime(e.createdAt), class: 'nowrap' },
          ]}
        />
      </div>
    </section>
  );
}

export function LoyaltyPage({ can, route }: PageProps) {
  if (!can('loyalty:read')) return <RefusedPage title="Loyalty" what="loyalty programs" />;
  if (route[1] === 'members' && route[2]) return <Member key={route[2]} id={route[2]} can={can} />;
  return route[1] ? <Program key={route[1]} id={route[1]} /> : <Programs />;
}
