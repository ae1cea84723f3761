// What people read from the CLI, in-process: help wrapped at 80 columns, --pretty tables fitted to 80 and 120
// columns with a few columns per resource or the ones asked for, and the fixed CSV header of a list's items.
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/registry.js';
import { commandOf, runCli } from '../../src/cli/run.js';
import { listItemFields } from '../../src/cli/operation-command.js';
import { formatResult, wrap } from '../../src/cli/output.js';

function captured() {
  let out = '';
  let err = '';
  const stream = (append: (s: string) => void) => ({ write: (s: string) => (append(s), true), isTTY: false, columns: undefined }) as unknown as NodeJS.WriteStream;
  return {
    io: { stdout: stream((s) => (out += s)), stderr: stream((s) => (err += s)), env: {} },
    out: () => out,
    err: () => err,
  };
}

const tooWide = (text: string, width = 80) => text.split('\n').filter((line) => line.length > width);

const vouchers = [
  {
    id: '0190f7a2-6a4e-7cc1-9b55-3f1a2b3c4d5e',
    code: 'SPRING-2026-ABCDEFGH',
    campaignId: '0190f7a2-6a4e-7cc1-9b55-000000000001',
    type: 'DISCOUNT',
    discount: { type: 'PERCENT', percentOff: 15 },
    active: true,
    redemption: { limit: 100, redeemedCount: 3 },
    metadata: { channel: 'newsletter', region: 'north-west-and-the-islands' },
    createdAt: '2026-11-24T10:00:00.000Z',
  },
  {
    id: '0190f7a2-6a4e-7cc1-9b55-3f1a2b3c4d5f',
    code: 'GIFT-1',
    campaignId: null,
    type: 'GIFT_CARD',
    gift: { amount: 5_000, balance: 1_250, currency: 'EUR' },
    active: false,
    createdAt: '2026-11-24T10:00:01.000Z',
  },
];

describe('help', () => {
  it('wraps the overview and every command help at 80 columns', async () => {
    const main = captured();
    expect(await runCli(['--help'], operations, main.io)).toBe(0);
    expect(tooWide(main.out())).toEqual([]);
    for (const op of operations) expect(main.out(), op.name).toContain(commandOf(op));
    for (const op of operations) {
      const one = captured();
      expect(await runCli([...commandOf(op).split(' '), '--help'], operations, one.io), op.name).toBe(0);
      // `workspaces create` is also an operator command (on the database): its help is the overview.
      expect(one.out(), op.name).toContain(op.name === 'workspaces.create' ? 'workspaces create --name N' : `usage: promotions ${commandOf(op)}`);
      expect(tooWide(one.out()), op.name).toEqual([]);
    }
  });

  it('prints the MCP command help instead of asking for a key', async () => {
    const mcp = captured();
    expect(await runCli(['mcp', '--help'], operations, mcp.io)).toBe(0);
    expect(mcp.out()).toContain('usage: promotions mcp');
    expect(mcp.err()).toBe('');
  });

  it('keeps the padding before the indent and breaks only at spaces after it', () => {
    expect(wrap('  cmd      one two three four', 11, 21)).toBe('  cmd      one two\n           three four');
    expect(wrap('short', 4, 80)).toBe('short');
  });
});

describe('--pretty tables', () => {
  it('shows a few telling columns per resource and fits 80 and 120 columns', () => {
    const at80 = formatResult({ data: vouchers, next: 'eyJjdXJzb3IiOiJuZXh0In0' }, true, { width: 80 });
    const at120 = formatResult({ data: vouchers }, true, { width: 120 });
    expect(tooWide(at80)).toEqual([]);
    expect(tooWide(at120, 120)).toEqual([]);
    expect(at80.split('\n')[0]).toMatch(/^id\s+code\s+type\s+active$/);
    expect(at120.split('\n')[0]).toMatch(/^id\s+code\s+type\s+active\s+createdAt$/);
    expect(at80).toContain(vouchers[0]!.id);
    expect(at80).toMatchSnapshot('vouchers at 80 columns');
    expect(at120).toMatchSnapshot('vouchers at 120 columns');
  });

  it('shows the columns asked for, and a single object one field per line', () => {
    const chosen = formatResult({ data: vouchers }, true, { width: 80, columns: ['code', 'gift', 'metadata'] });
    expect(chosen.split('\n')[0]).toMatch(/^code\s+gift\s+metadata$/);
    expect(tooWide(chosen)).toEqual([]);
    const one = formatResult(vouchers[0], true, { width: 80 });
    expect(tooWide(one)).toEqual([]);
    expect(one).toMatchSnapshot('one voucher at 80 columns');
  });
});

describe('CSV export header', () => {
  it("is every field of the list's item schema, including those the first rows lack", () => {
    const redemptions = operations.find((op) => op.name === 'redemptions.list')!;
    const fields = listItemFields(redemptions);
    expect(fields).toEqual(expect.arrayContaining(['id', 'voucherCode', 'customerId', 'stackId', 'rolledBackAt']));
    const vouchersList = operations.find((op) => op.name === 'vouchers.list')!;
    expect(listItemFields(vouchersList).slice(0, 2)).toEqual(['id', 'code']);
  });
});
