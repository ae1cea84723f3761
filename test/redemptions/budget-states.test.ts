// A partition's campaign budget figures, read from the real database: a stale mark (a rollback elsewhere gave a use
// back) that lands while the figures are being read keeps them stale, so the next decision reads them again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { BudgetStates } from '../../src/engine/partition/budget-states.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const WS = '00000000-0000-4000-8000-000000000001';
const CAMPAIGN = '00000000-0000-4000-8000-0000000000ca';

const voucher = {
  id: '00000000-0000-4000-8000-000000000b01',
  workspaceId: WS,
  code: 'BUDGET-1',
  type: 'DISCOUNT',
  campaignId: CAMPAIGN,
  campaign: {
    id: CAMPAIGN,
    active: true,
    startDate: null,
    expirationDate: null,
    currency: null,
    priority: 0,
    exclusive: false,
    version: 1,
    validationRuleIds: [],
    schedule: null,
    budget: { daily: { redemptions: 2 } },
  },
  timeZone: 'UTC',
} as unknown as VoucherSnapshot;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

describe('campaign budget figures in a partition', () => {
  it('stay stale when marked stale while they are read, and fresh when nothing marked them meanwhile', async () => {
    const states = new BudgetStates(db.pool, new ZoneCalendar());
    const now = Date.now();
    const reading = states.load([voucher], now);
    states.markStale(CAMPAIGN);
    await reading;
    expect(states.fresh(voucher, now), 'figures read before the mark are not trusted').toBe(false);

    await states.load([voucher], now);
    expect(states.fresh(voucher, now)).toBe(true);
    expect(states.left(voucher, now)).toEqual({ uses: 2, amount: null });
  });
});
