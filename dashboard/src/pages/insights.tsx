// Insights: redemptions and discount per day (uPlot), failures by code, top campaigns, budget burn, gift card
// liability, webhook health, loyalty points per day and members per tier, referrals; each read from its insights.*
// operation and shown (or its error) on its own.
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import type { OutputOf } from '../../../src/client/operation-types.js';
import { call } from '../api.js';
import { PALETTE, TimeChart, type ChartSeries } from '../chart.js';
import { ErrorNote, formatTime, money, PageHeader, RefusedPage, useLoad } from '../components.js';
import type { PageProps } from '../app.js';

const RANGES = [
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
] as const;

function Card({ title, wide, children }: { title: string; wide?: boolean; children: ComponentChildren }) {
  return (
    <section class={wide ? 'panel card card-wide' : 'panel card'} aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

function Stat({ label, value, tone }: { label: string; value: ComponentChildren; tone?: 'good' | 'bad' }) {
  return (
    <div class={`stat${tone ? ' stat-' + tone : ''}`}>
      <div class="stat-value">{value}</div>
      <div class="muted small">{label}</div>
    </div>
  );
}

/** Horizontal bars: label, a bar as wide as its share of the largest, the figure. */
function Bars({ rows, empty, scale }: { rows: { label: ComponentChildren; value: number; text: string; tone?: 'bad' }[]; empty: string; scale?: number }) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  const max = scale ?? Math.max(...rows.map((r) => r.value), 1);
  return (
    <ul class="bars">
      {rows.map((r) => (
        <li>
          <span class="bar-label">{r.label}</span>
          <span class="bar-track">
            <span class={r.tone === 'bad' ? 'bar bar-bad' : 'bar'} style={{ width: `${Math.min(100, Math.max(r.value > 0 ? 2 : 0, (100 * r.value) / max))}%` }} />
          </span>
          <span class="bar-value">{r.text}</span>
        </li>
      ))}
    </ul>
  );
}

type Periods = OutputOf<'insights.redemptions'>['data'];

/**
 * One x per day of the range, and where a period falls on it. Days start at the workspace's midnight (the periods say
 * where), so the days are counted from the first period; rounding absorbs a DST hour.
 */
function dayAxis(periods: readonly { period: string }[], from: string) {
  const start = Date.parse(from) / 1000;
  const now = Date.now() / 1000;
  const anchor = periods.length ? Date.parse(periods[0]!.period) / 1000 : Math.floor(now / 86_400) * 86_400;
  const first = anchor - Math.ceil((anchor - start) / 86_400) * 86_400;
  const x: number[] = [];
  for (let t = first; t <= now; t += 86_400) x.push(t);
  const dayOf = (iso: string) => Math.round((Date.parse(iso) / 1000 - first) / 86_400);
  return { x, dayOf };
}

/** The redemption periods on the day axis, zero where the service left a day out. */
function perDay(periods: Periods, from: string) {
  const { x, dayOf } = dayAxis(periods, from);
  const currencies = [...new Set(periods.map((p) => p.currency ?? '—'))];
  const redemptions = x.map(() => 0);
  const rollbacks = x.map(() => 0);
  const discount = new Map(currencies.map((c) => [c, x.map(() => 0)]));
  for (const p of periods) {
    const i = dayOf(p.period);
    if (i < 0 || i >= x.length) continue;
    redemptions[i]! += p.redemptions;
    rollbacks[i]! += p.rollbacks;
    discount.get(p.currency ?? '—')![i]! += p.discountAmount;
  }
  const totals = currencies.map((c) => ({ currency: c, discount: discount.get(c)!.reduce((a, b) => a + b, 0) }));
  return { x, redemptions, rollbacks, discount, currencies, totals, any: periods.length > 0 };
}

function RedemptionCharts({ days }: { days: number }) {
  const from = useMemo(() => new Date(Date.now() - days * 86_400_000).toISOString(), [days]);
  const loaded = useLoad(() => call('insights.redemptions', { interval: 'day', from }), [from]);
  const shaped = useMemo(() => (loaded.value ? perDay(loaded.value.data, from) : undefined), [loaded.value]);
  const counts = useMemo<ChartSeries[]>(
    () =>
      shaped
        ? [
            { label: 'Redemptions', values: shaped.redemptions, color: PALETTE[0]!, style: 'bars' },
            { label: 'Rollbacks', values: shaped.rollbacks, color: PALETTE[3]!, style: 'line' },
          ]
        : [],
    [shaped],
  );
  const discounts = useMemo<ChartSeries[]>(
    () => (shaped ? shaped.currencies.map((c, i) => ({ label: `Discount ${c}`, values: shaped.discount.get(c)!, color: PALETTE[(i + 1) % PALETTE.length]!, style: 'line' as const })) : []),
    [shaped],
  );
  if (loaded.error) return <Card title="Redemptions per day" wide><ErrorNote error={loaded.error} /></Card>;
  if (!shaped) return <Card title="Redemptions per day" wide><p class="muted">Loading…</p></Card>;
  const total = shaped.redemptions.reduce((a, b) => a + b, 0);
  const rolledBack = shaped.rollbacks.reduce((a, b) => a + b, 0);
  return (
    <>
      <div class="stats" aria-label="Totals">
        <Stat label={`Redemptions, last ${days} days`} value={total} />
        <Stat label="Rollbacks" value={rolledBack} tone={rolledBack ? 'bad' : undefined} />
        {shaped.totals.map((t) => (
          <Stat label={`Discount given (${t.currency})`} value={money(t.discount)} />
        ))}
      </div>
      <Card title="Redemptions per day" wide>
        {!shaped.any ? <p class="empty">No redemptions in this range.</p> : <TimeChart label="Redemptions per day" x={shaped.x} series={counts} />}
      </Card>
      <Card title="Discount per day" wide>
        {!shaped.any ? <p class="empty">No discounts in this range.</p> : <TimeChart label="Discount per day" x={shaped.x} series={discounts} format={(v) => money(v)} />}
      </Card>
      {loaded.value?.returns && <Returns periods={loaded.value.returns} days={days} />}
    </>
  );
}

type ReturnPeriods = NonNullable<OutputOf<'insights.redemptions'>['returns']>;

/** What order returns gave back in the range, per currency. */
function Returns({ periods, days }: { periods: ReturnPeriods; days: number }) {
  const byCurrency = new Map<string, Omit<ReturnPeriods[number], 'period' | 'currency'>>();
  for (const { period: _, currency, ...p } of periods) {
    const t = byCurrency.get(currency ?? '');
    byCurrency.set(currency ?? '', t ? (Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v + p[k as keyof typeof p]])) as typeof p) : p);
  }
  return (
    <Card title="Order returns" wide>
      {byCurrency.size === 0 && <p class="empty">No returns in this range.</p>}
      {[...byCurrency].map(([currency, t]) => (
        <div class="stats" aria-label={`Returns ${currency}`}>
          <Stat label={`returns, last ${days} days`} value={t.returns} tone={t.returns ? 'bad' : undefined} />
          <Stat label={`returned (${currency})`} value={money(t.returnedAmount)} />
          <Stat label="discount returned" value={money(t.returnedDiscountAmount)} />
          <Stat label="gift credits back" value={money(t.returnedGiftAmount)} />
          <Stat label="points paid back" value={t.returnedPointsPaid} />
          <Stat label="points earned taken" value={t.returnedPointsEarned} />
        </div>
      ))}
    </Card>
  );
}

function Failures({ days }: { days: number }) {
  const from = useMemo(() => new Date(Date.now() - days * 86_400_000).toISOString(), [days]);
  const loaded = useLoad(() => call('insights.failures', { from }), [from]);
  return (
    <Card title="Failures by code">
      <ErrorNote error={loaded.error} />
      {loaded.value && (
        <Bars
          empty="No refused redemptions in this range."
          rows={loaded.value.data.map((f) => ({ label: <code>{f.code}</code>, value: f.count, text: String(f.count), tone: 'bad' as const }))}
        />
      )}
    </Card>
  );
}

function TopCampaigns({ days }: { days: number }) {
  const from = useMemo(() => new Date(Date.now() - days * 86_400_000).toISOString(), [days]);
  const loaded = useLoad(() => call('insights.campaigns', { from, limit: 8 }), [from]);
  return (
    <Card title="Top campaigns">
      <ErrorNote error={loaded.error} />
      {loaded.value && (
        <Bars
          empty="No campaign redemptions in this range."
          rows={loaded.value.data.map((c) => ({
            label: <a href={`#/campaigns/${c.campaignId}`}>{c.name ?? 'deleted campaign'}</a>,
            value: c.redemptions,
            text: `${c.redemptions} · ${money(c.discountAmount + c.giftAmount, c.currency)}`,
          }))}
        />
      )}
    </Card>
  );
}

const PERIOD_LABELS = { total: 'Total', daily: 'Today', weekly: 'This week', monthly: 'This month' } as const;

function BudgetBurn() {
  const loaded = useLoad(() => call('insights.budgets', { limit: 10 }), []);
  const rows = loaded.value?.data.flatMap((c) =>
    c.limits.map((l) => ({
      label: (
        <span>
          <a href={`#/campaigns/${c.campaignId}`}>{c.name}</a> <span class="muted small">{PERIOD_LABELS[l.period]}</span>
        </span>
      ),
      value: l.burn,
      text: `${Math.round(l.burn * 100)}%`,
      tone: l.burn >= 0.9 ? ('bad' as const) : undefined,
    })),
  );
  return (
    <Card title="Budget burn">
      <ErrorNote error={loaded.error} />
      {/* A burn is a share of its own limit: bars are scaled to 100 %, not to the largest. */}
      {rows && <Bars rows={rows} scale={1} empty="No campaign has a budget." />}
    </Card>
  );
}

function GiftCards() {
  const loaded = useLoad(() => call('insights.giftCards', {}), []);
  return (
    <Card title="Gift card liability">
      <ErrorNote error={loaded.error} />
      {loaded.value &&
        (loaded.value.data.length === 0 ? (
          <p class="empty">No gift cards.</p>
        ) : (
          <div class="stats">
            {loaded.value.data.map((g) => (
              <Stat label={`outstanding on ${g.cardsWithBalance} of ${g.cards} cards`} value={money(g.outstanding, g.currency)} />
            ))}
          </div>
        ))}
    </Card>
  );
}

function age(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

function WebhookHealth() {
  const loaded = useLoad(() => call('insights.webhooks', {}), []);
  const w = loaded.value;
  const rate = w?.last24h.successRate;
  return (
    <Card title="Webhook health">
      <ErrorNote error={loaded.error} />
      {w && (
        <>
          <div class="stats">
            <Stat label="Success, last 24 h" value={rate === null || rate === undefined ? '—' : `${Math.round(rate * 1000) / 10}%`} tone={rate !== null && rate !== undefined && rate < 0.95 ? 'bad' : 'good'} />
            <Stat label="Attempts, last 24 h" value={w.last24h.attempts} />
            <Stat label="Oldest pending" value={w.oldestPendingAgeSeconds === null ? '—' : age(w.oldestPendingAgeSeconds)} />
          </div>
          <Bars
            empty=""
            rows={[
              { label: 'Delivered', value: w.deliveries.delivered, text: String(w.deliveries.delivered) },
              { label: 'Pending', value: w.deliveries.pending, text: String(w.deliveries.pending) },
              { label: 'Retry scheduled', value: w.deliveries.retryScheduled, text: String(w.deliveries.retryScheduled) },
              { label: 'Dead', value: w.deliveries.dead, text: String(w.deliveries.dead), tone: 'bad' as const },
            ]}
          />
          {w.oldestPendingAt && <p class="muted small">Oldest pending since {formatTime(w.oldestPendingAt)}.</p>}
        </>
      )}
    </Card>
  );
}

type LoyaltyPeriods = OutputOf<'insights.loyalty'>['periods'];
const POINT_SERIES = [
  { key: 'earned', label: 'Earned', color: PALETTE[1]!, style: 'bars' },
  { key: 'spent', label: 'Spent', color: PALETTE[0]!, style: 'line' },
  { key: 'expired', label: 'Expired', color: PALETTE[2]!, style: 'line' },
  { key: 'reversed', label: 'Reversed', color: PALETTE[3]!, style: 'line' },
] as const;

/** Points earned, spent, expired and reversed per day, zero where the service left a day out. */
function pointsPerDay(periods: LoyaltyPeriods, from: string): { x: number[]; series: ChartSeries[] } {
  const { x, dayOf } = dayAxis(periods, from);
  const series = POINT_SERIES.map((s) => ({ label: s.label, color: s.color, style: s.style, values: x.map(() => 0) as number[] }));
  for (const p of periods) {
    const i = dayOf(p.period);
    if (i < 0 || i >= x.length) continue;
    POINT_SERIES.forEach((s, k) => (series[k]!.values[i]! += p[s.key]));
  }
  return { x, series };
}

const count = (n: number) => n.toLocaleString();

function LoyaltyFigures({ days }: { days: number }) {
  const from = useMemo(() => new Date(Date.now() - days * 86_400_000).toISOString(), [days]);
  const loaded = useLoad(() => call('insights.loyalty', { from }), [from]);
  const l = loaded.value;
  const chart = useMemo(() => (l ? pointsPerDay(l.periods, from) : undefined), [l]);
  if (loaded.error) return <Card title="Loyalty points per day" wide><ErrorNote error={loaded.error} /></Card>;
  if (!l || !chart) return <Card title="Loyalty points per day" wide><p class="muted">Loading…</p></Card>;
  return (
    <>
      <Card title="Loyalty points per day" wide>
        <div class="stats" aria-label="Points moved">
          <Stat label={`earned, last ${days} days`} value={count(l.points.earned)} tone="good" />
          <Stat label="spent" value={count(l.points.spent)} />
          <Stat label="expired" value={count(l.points.expired)} tone={l.points.expired ? 'bad' : undefined} />
          <Stat label="reversed" value={count(l.points.reversed)} tone={l.points.reversed ? 'bad' : undefined} />
          <Stat label="refunded" value={count(l.points.refunded)} />
          <Stat label="adjusted (net)" value={(l.points.adjusted > 0 ? '+' : '') + count(l.points.adjusted)} />
        </div>
        {l.periods.length === 0 ? <p class="empty">No points moved in this range.</p> : <TimeChart label="Loyalty points per day" x={chart.x} series={chart.series} format={count} />}
      </Card>
      <Card title="Members per tier">
        <div class="stats" aria-label="Loyalty now">
          <Stat label="members" value={count(l.members)} />
          <Stat label="points held" value={count(l.outstanding)} />
          <Stat label="points pending" value={count(l.pending)} />
        </div>
        <Bars
          empty="No members yet."
          rows={l.tiers
            .filter((t) => t.tierId !== null || t.members > 0)
            .map((t) => ({ label: t.name ?? 'No tier', value: t.members, text: count(t.members) }))}
        />
      </Card>
    </>
  );
}

function ReferralFigures({ days }: { days: number }) {
  const from = useMemo(() => new Date(Date.now() - days * 86_400_000).toISOString(), [days]);
  const loaded = useLoad(() => call('insights.referrals', { from, limit: 5 }), [from]);
  const r = loaded.value;
  return (
    <Card title="Referrals">
      <ErrorNote error={loaded.error} />
      {r && (
        <>
          <div class="stats">
            <Stat label="confirmed" value={r.conversions.confirmed} tone="good" />
            <Stat label="pending" value={r.conversions.pending} />
            <Stat label="reverted" value={r.conversions.reverted} tone={r.conversions.reverted ? 'bad' : undefined} />
            <Stat label="rewards granted" value={r.rewards.granted} />
          </div>
          <Bars
            empty="No conversions in this range."
            rows={r.topReferrers.map((t) => ({ label: <code>{t.code}</code>, value: t.confirmed, text: `${t.confirmed} confirmed${t.pending ? `, ${t.pending} pending` : ''}` }))}
          />
        </>
      )}
    </Card>
  );
}

export function InsightsPage({ can }: PageProps) {
  const [days, setDays] = useState(30);
  if (!can('insights:read')) return <RefusedPage title="Insights" what="insights" />;
  return (
    <section>
      <PageHeader title="Insights">
        <div class="segmented" role="group" aria-label="Range">
          {RANGES.map((r) => (
            <button class={r.days === days ? 'button-primary' : 'button-quiet'} aria-pressed={r.days === days} onClick={() => setDays(r.days)}>
              {r.label}
            </button>
          ))}
        </div>
      </PageHeader>
      <RedemptionCharts days={days} />
      <div class="cards">
        <Failures days={days} />
        <TopCampaigns days={days} />
        <BudgetBurn />
        <WebhookHealth />
        <GiftCards />
        <LoyaltyFigures days={days} />
        <ReferralFigures days={days} />
      </div>
    </section>
  );
}
