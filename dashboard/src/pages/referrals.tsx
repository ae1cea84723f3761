// Referrals: the programs, and a program's conversions with the rewards each side got. Routes: #/referrals,
// #/referrals/<programId>.
import { useCallback } from 'preact/hooks';
import { call } from '../api.js';
import { Badge, ErrorNote, formatTime, PagedTable, PageHeader, RefusedPage, useLoad } from '../components.js';
import type { PageProps } from '../app.js';

const TONE = { CONFIRMED: 'good', PENDING: 'neutral', REVERTED: 'bad' } as const;

function Programs() {
  const load = useCallback((cursor: string | undefined) => call('campaigns.list', { type: 'REFERRAL_PROGRAM', limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Referrals" />
      <PagedTable
        label="Referral programs"
        load={load}
        empty="No referral programs yet. Create a campaign of type REFERRAL_PROGRAM."
        columns={[
          { label: 'Program', render: (c) => <a href={`#/referrals/${c.id}`}>{c.name}</a> },
          { label: 'Confirmed on', render: (c) => c.referral?.confirmOn ?? '—' },
          { label: 'Cap per referrer', render: (c) => c.referral?.maxConversionsPerReferrer ?? 'none', class: 'num' },
          { label: 'Status', render: (c) => (c.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Inactive</Badge>) },
          { label: 'Created', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

function Program({ id }: { id: string }) {
  const program = useLoad(() => call('campaigns.get', { id }), [id]);
  const conversions = useCallback((cursor: string | undefined) => call('referrals.listConversions', { id, limit: 20, ...(cursor ? { cursor } : {}) }), [id]);
  return (
    <section>
      <PageHeader title={program.value?.name ?? 'Referral program'} back={{ href: '#/referrals', label: 'Referrals' }} />
      <ErrorNote error={program.error} />
      <PagedTable
        label="Conversions"
        load={conversions}
        empty="No conversions yet."
        columns={[
          { label: 'Code', render: (c) => <code>{c.code}</code> },
          { label: 'Referrer', render: (c) => <a href={`#/customers/${c.referrerCustomerId}`}>{c.referrerCustomerId.slice(0, 8)}</a> },
          { label: 'Referee', render: (c) => <a href={`#/customers/${c.refereeCustomerId}`}>{c.refereeCustomerId.slice(0, 8)}</a> },
          { label: 'Order', render: (c) => c.orderId ?? '—' },
          { label: 'Status', render: (c) => <Badge tone={TONE[c.status]}>{c.status}</Badge> },
          { label: 'Rewards', render: (c) => (c.outcomes.length ? c.outcomes.map((o) => `${o.side.toLowerCase()}: ${o.status.toLowerCase()}`).join(', ') : '—') },
          { label: 'When', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

export function ReferralsPage({ can, route }: PageProps) {
  if (!can('referrals:read')) return <RefusedPage title="Referrals" what="referral programs" />;
  return route[1] ? <Program key={route[1]} id={route[1]} /> : <Programs />;
}
