// The CLI as a subprocess against a real service: generated commands, output formats, key sources, errors, export.
import { chmodSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/registry.js';
import { packageVersion } from '../../src/platform/paths.js';
import { startTestService, type TestService } from '../support/service.js';
import { runCliProcess } from './cli-process.js';

let service: TestService;
let key: string;
let env: Record<string, string>;
const home = mkdtempSync(path.join(os.tmpdir(), 'promotions-cli-home-'));
beforeAll(async () => {
  service = await startTestService();
  ({ key } = await service.newWorkspace());
  // An empty config home, so no developer's own config file is read.
  env = { PROMOTIONS_URL: service.baseUrl, PROMOTIONS_API_KEY: key, XDG_CONFIG_HOME: home, HOME: home };
});
afterAll(async () => service?.close());

const cli = (args: string[], extra: Record<string, string | undefined> = {}) => runCliProcess(args, { ...env, ...extra });

describe('generated commands', () => {
  it('prints the one version', async () => {
    const result = await cli(['--version']);
    expect(result.stdout.trim()).toBe(packageVersion);
  });

  it('lists a command for every registered operation in its help', async () => {
    const { stdout, code } = await cli(['--help']);
    expect(code).toBe(0);
    for (const op of operations) {
      const [group, verb] = op.name.split('.') as [string, string];
      const command = `${group.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())} ${verb.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}`;
      expect(stdout, op.name).toContain(command);
    }
    const help = await cli(['vouchers', 'create', '--help']);
    expect(help.stdout).toContain('usage: promotions vouchers create');
    expect(help.stdout).toContain('--campaignId <string>');
  });

  it('creates, reads, updates, lists and deletes with positionals, typed flags, dotted and JSON objects', async () => {
    const created = await cli(['campaigns', 'create', '--name', 'CLI made', '--type', 'DISCOUNT_COUPONS', '--currency', 'EUR', '--voucher.discount', '{"type":"AMOUNT","amountOff":250}', '--voucher.redemption-limit', '10']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const campaign = JSON.parse(created.stdout);
    expect(campaign).toMatchObject({ name: 'CLI made', voucher: { discount: { amountOff: 250 }, redemptionLimit: 10 } });

    const voucher = JSON.parse((await cli(['vouchers', 'create', '--code', 'CLI-1', '--campaign-id', campaign.id])).stdout);
    expect(voucher).toMatchObject({ code: 'CLI-1', discount: { amountOff: 250 }, redemption: { limit: 10 } });
    const updated = JSON.parse((await cli(['vouchers', 'update', 'CLI-1', '--no-active', '--metadata', '{"team":"ops"}'])).stdout);
    expect(updated).toMatchObject({ active: false, metadata: { team: 'ops' } });
    expect(JSON.parse((await cli(['vouchers', 'get', 'CLI-1'])).stdout).active).toBe(false);

    const page = JSON.parse((await cli(['vouchers', 'list', '--campaign-id', campaign.id, '--limit', '50'])).stdout);
    expect(page.data.map((v: { code: string }) => v.code)).toEqual(['CLI-1']);
    const table = await cli(['campaigns', 'list', '--pretty']);
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+name\s+type/);
    expect(table.stdout).toContain('CLI made');

    await cli(['vouchers', 'enable', 'CLI-1']);
    const validation = await cli(['vouchers', 'validate', 'CLI-1', '--order', '{"amount":1000,"currency":"EUR"}']);
    expect(JSON.parse(validation.stdout)).toMatchObject({ valid: true, discount: { amount: 250 } });

    const deleted = await cli(['vouchers', 'delete', 'CLI-1']);
    expect(deleted).toMatchObject({ code: 0, stdout: '' });
    const gone = await cli(['vouchers', 'get', 'CLI-1']);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stderr)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('streams every page with --all and exports a list as NDJSON or CSV', async () => {
    const campaign = JSON.parse((await cli(['campaigns', 'create', '--name', 'Export', '--type', 'DISCOUNT_COUPONS', '--currency', 'EUR', '--voucher.discount.type', 'AMOUNT', '--voucher.discount.amount-off', '5'])).stdout);
    expect(campaign.voucher.discount).toEqual({ type: 'AMOUNT', amountOff: 5 });
    await cli(['vouchers', 'generate', campaign.id, '--count', '250']);
    const all = await cli(['vouchers', 'list', '--campaign-id', campaign.id, '--limit', '100', '--all']);
    const items = all.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(items).toHaveLength(250);
    expect(new Set(items.map((v) => v.code)).size).toBe(250);

    const ndjson = await cli(['export', 'vouchers', '--campaign-id', campaign.id]);
    expect(ndjson.stdout.trim().split('\n')).toHaveLength(250);
    expect(ndjson.stderr).toContain('250 rows exported');
    const csv = await cli(['export', 'vouchers', '--campaign-id', campaign.id, '--format', 'csv']);
    const lines = csv.stdout.trim().split('\r\n');
    expect(lines).toHaveLength(251);
    expect(lines[0]).toMatch(/^id,code,campaignId,type,discount,/);
    expect(lines[1]).toContain('"{""type"":""AMOUNT"",""amountOff"":5}"');
    const code = items[0].code as string;
    const redeemed = await cli(['redemptions', 'redeem', code, '--order', '{"amount":1000,"currency":"EUR"}']);
    expect(JSON.parse(redeemed.stdout)).toMatchObject({ ok: true });
    const redemptions = await cli(['export', 'redemptions']);
    expect(redemptions.stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ voucherCode: code })]);
    // The header is the item schema's, so fields the only row lacks (no customer, no stack) are still columns.
    const redemptionsCsv = (await cli(['export', 'redemptions', '--format', 'csv'])).stdout.trim().split('\r\n');
    expect(redemptionsCsv).toHaveLength(2);
    expect(redemptionsCsv[0]!.split(',')).toEqual(expect.arrayContaining(['voucherCode', 'customerId', 'stackId', 'rolledBackAt']));
    const campaigns = await cli(['export', 'campaigns', '--format', 'csv']);
    expect(campaigns.stdout.trim().split('\r\n').length).toBeGreaterThanOrEqual(2);
  }, 90_000); // nine CLI processes, each a node start: 11-22 s on this machine, past 30 s beside the timed tests

  it('reaches any operation by name with call, also where an operator command has the same words', async () => {
    const result = await cli(['call', 'workspaces.current']);
    expect(JSON.parse(result.stdout)).toHaveProperty('id');
    const refused = await cli(['call', 'workspaces.create', '--name', 'Nope']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ status: 403, code: 'forbidden' });
  });
});

describe('key sources', () => {
  it('reads the key from a config file (default location, --config, PROMOTIONS_CONFIG) when the env has none', async () => {
    mkdirSync(path.join(home, 'promotions'), { recursive: true });
    const file = path.join(home, 'promotions', 'config.json');
    writeFileSync(file, JSON.stringify({ baseUrl: service.baseUrl, apiKey: key }), { mode: 0o600 });
    chmodSync(file, 0o600);
    const viaDefault = await cli(['campaigns', 'list'], { PROMOTIONS_API_KEY: undefined, PROMOTIONS_URL: undefined });
    expect(viaDefault.stderr).toBe('');
    expect(viaDefault.code).toBe(0);

    const other = path.join(home, 'other.json');
    writeFileSync(other, JSON.stringify({ baseUrl: service.baseUrl, apiKey: key }), { mode: 0o644 });
    chmodSync(other, 0o644);
    const viaFlag = await cli(['campaigns', 'list', '--config', other], { PROMOTIONS_API_KEY: undefined, XDG_CONFIG_HOME: '/nonexistent' });
    expect(viaFlag.code).toBe(0);
    expect(viaFlag.stderr).toContain('readable by others');
    const viaEnv = await cli(['campaigns', 'list'], { PROMOTIONS_API_KEY: undefined, PROMOTIONS_CONFIG: other, XDG_CONFIG_HOME: '/nonexistent' });
    expect(viaEnv.code).toBe(0);
  });

  it('explains where a key comes from when there is none, and never takes one from a flag', async () => {
    const none = await cli(['campaigns', 'list'], { PROMOTIONS_API_KEY: undefined, XDG_CONFIG_HOME: path.join(home, 'empty') });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('PROMOTIONS_API_KEY');
    const flag = await cli(['campaigns', 'list', '--api-key', key], { PROMOTIONS_API_KEY: undefined });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/never taken from a flag/);
    expect(flag.stderr).not.toContain(key);
  });

  it('never prints the key, whatever fails', async () => {
    const wrongKey = 'service_abcdefghijkl_' + 'x'.repeat(40);
    const results = await Promise.all([
      cli(['campaigns', 'list'], { PROMOTIONS_API_KEY: wrongKey }),
      cli(['campaigns', 'list'], { PROMOTIONS_API_KEY: wrongKey, PROMOTIONS_URL: 'http://127.0.0.1:9' }),
      cli(['campaigns', 'create', '--name', 'x'], { PROMOTIONS_API_KEY: wrongKey }),
    ]);
    expect(results[0]!.code).toBe(1);
    expect(JSON.parse(results[0]!.stderr)).toMatchObject({ code: 'unauthorized' });
    expect(results[1]!.stderr).toMatch(/cannot reach/);
    for (const r of results) expect(r.stdout + r.stderr).not.toContain('xxxxxxxxxx');
  });
});

describe('usage errors', () => {
  it('exits 2 with a message for unknown commands, extra positionals and bad JSON', async () => {
    const unknown = await cli(['vouchers', 'explode']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('vouchers create');
    expect((await cli(['vouchers', 'get', 'A', 'B'])).code).toBe(2);
    expect((await cli(['vouchers', 'get', 'A', '--all'])).stderr).toContain('not one');
    expect((await cli(['export', 'vouchers.get'])).code).toBe(2);
    const badJson = await cli(['vouchers', 'update', 'A', '--metadata', '{oops']);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain('--metadata');
  });

  it('answers invalid values with the server\'s problem naming the field', async () => {
    const result = await cli(['campaigns', 'list', '--limit', '500']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ code: 'invalid_request', errors: [{ path: 'limit' }] });
  });
});
