// Bulk CSV import through the CLI subprocess against a real service: the file streamed to vouchers.import and its job
// followed, row by row into vouchers.create (RPC batches), and 100,000 rows in batches into a JSON bulk operation.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceWithOperations, type ServiceWithOperations } from '../rpc/service-with-operations.js';
import { runCliProcess } from './cli-process.js';
import { receivedCodes, throwawayHandlers } from './fixtures/throwaway-operations.mjs';

const CLI_WITH_THROWAWAY = path.join(import.meta.dirname, 'fixtures/cli-with-throwaway.mjs');
let service: ServiceWithOperations;
let env: Record<string, string>;
let campaignId: string;
const dir = mkdtempSync(path.join(os.tmpdir(), 'promotions-cli-'));

function csv(name: string, header: string, rows: Iterable<string>): string {
  const file = path.join(dir, name);
  writeFileSync(file, [header, ...rows].join('\n') + '\n');
  return file;
}

beforeAll(async () => {
  service = await startServiceWithOperations({ extra: throwawayHandlers });
  const key = await service.newKey();
  env = { PROMOTIONS_URL: service.baseUrl, PROMOTIONS_API_KEY: key, XDG_CONFIG_HOME: dir };
  const res = await fetch(`${service.baseUrl}/api/v1/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Imported', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } }),
  });
  campaignId = ((await res.json()) as { id: string }).id;
});
afterAll(async () => service?.close());

const createCount = Number(process.env.IMPORT_CREATE_COUNT ?? 1_000);

describe('CSV import', () => {
  it('streams 100,000 codes to vouchers.import and follows the job to the end', async () => {
    const count = 100_000;
    const file = csv('stream.csv', 'code,metadata.batch', Array.from({ length: count }, (_, i) => `STR-${String(i).padStart(6, '0')},b${i % 3}`));
    const started = performance.now();
    const result = await runCliProcess(['import', 'vouchers', file, '--set', `campaignId=${campaignId}`], env);
    console.log(`vouchers.import through the CLI: ${count} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ operation: 'vouchers.import', status: 'SUCCEEDED', counts: { read: count, inserted: count, rejected: 0 }, rejections: [] });
    expect(result.code).toBe(0);
    const { rows } = await service.db.pool.query("SELECT count(*)::int AS n FROM vouchers WHERE campaign_id = $1 AND code LIKE 'STR-%' AND metadata ? 'batch'", [campaignId]);
    expect(rows[0].n).toBe(count);
  }, 120_000);

  it('reports the rows vouchers.import refused, by row, and exits 1; NDJSON by its extension', async () => {
    const file = csv('refused.csv', 'code', ['REF-1', 'REF-1', 'bad code!', 'REF-2']);
    const result = await runCliProcess(['import', 'vouchers', file, '--set', `campaignId=${campaignId}`], env);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ status: 'SUCCEEDED', counts: { read: 4, inserted: 2, rejected: 2 } });
    expect(report.rejections.map((r: { row: number; code: string }) => [r.row, r.code])).toEqual([
      [2, 'duplicate_in_file'],
      [3, 'invalid_row'],
    ]);
    const ndjson = path.join(dir, 'codes.ndjson');
    writeFileSync(ndjson, ['{"code":"NDJ-1"}', '{"code":"NDJ-2","redemptionLimit":5}'].join('\n'));
    const nd = await runCliProcess(['import', 'vouchers', ndjson, '--set', `campaignId=${campaignId}`], env);
    expect(JSON.parse(nd.stdout)).toMatchObject({ format: 'ndjson', counts: { inserted: 2 } });
    const wrongSet = await runCliProcess(['import', 'vouchers', ndjson, '--set', 'redemptionLimit=3'], env);
    expect(wrongSet.code).toBe(2);
    expect(wrongSet.stderr).toContain('campaignId');
  });

  it('imports vouchers row by row through vouchers.create, with typed and nested columns', async () => {
    const count = createCount;
    const file = csv('codes.csv', 'code,redemptionLimit,metadata.batch', Array.from({ length: count }, (_, i) => `IMP-${String(i).padStart(6, '0')},3,b${i % 7}`));
    const started = performance.now();
    const result = await runCliProcess(['import', 'vouchers.create', file, '--set', `campaignId=${campaignId}`, '--concurrency', process.env.IMPORT_CONCURRENCY ?? '8'], env);
    const seconds = (performance.now() - started) / 1000;
    console.log(`vouchers.create import: ${count} rows in ${seconds.toFixed(1)} s (${Math.round(count / seconds)} rows/s)`);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ operation: 'vouchers.create', rows: count, imported: count, failed: 0 });
    expect(result.code).toBe(0);
    const { rows } = await service.db.pool.query(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE redemption_limit = 3 AND metadata->>'batch' LIKE 'b%')::int AS typed FROM vouchers WHERE campaign_id = $1 AND code LIKE 'IMP-%'",
      [campaignId],
    );
    expect(rows[0]).toEqual({ n: count, typed: count });
  }, Math.max(60_000, createCount * 10));

  it('streams 100,000 rows into a bulk operation in batches, every row exactly once', async () => {
    const count = 100_000;
    receivedCodes.length = 0;
    const file = csv('bulk.csv', 'code,amount', Array.from({ length: count }, (_, i) => `BULK-${i},${i % 100}`));
    const started = performance.now();
    const result = await runCliProcess(['import', 'throwaways', file, '--batch-size', '5000'], env, { entry: CLI_WITH_THROWAWAY });
    const seconds = (performance.now() - started) / 1000;
    console.log(`bulk import: ${count} rows in ${seconds.toFixed(1)} s`);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ operation: 'throwaways.import', rows: count, imported: count, failed: 0 });
    expect(receivedCodes).toHaveLength(count);
    expect(new Set(receivedCodes).size).toBe(count);
  }, 60_000);

  it('reports failed rows by line and goes on; unknown columns are refused before anything is sent', async () => {
    const file = csv('mixed.csv', 'code,redemptionLimit', ['MIX-1,1', 'MIX-1,1', 'bad code!,1', 'MIX-2,many', 'MIX-3,2']);
    const result = await runCliProcess(['import', 'vouchers.create', file, '--set', `campaignId=${campaignId}`], env);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ rows: 5, imported: 2, failed: 3 });
    expect(report.failures).toEqual([
      expect.objectContaining({ line: 3, code: 'conflict' }),
      expect.objectContaining({ line: 4, code: 'invalid_request', errors: [expect.objectContaining({ path: 'code' })] }),
      expect.objectContaining({ line: 5, code: 'invalid_request', errors: [expect.objectContaining({ path: 'redemptionLimit' })] }),
    ]);

    const unknown = csv('unknown.csv', 'code,colour', ['X-1,red']);
    const refused = await runCliProcess(['import', 'vouchers.create', unknown], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('colour');
    // The streamed import: the service refuses the header before any row is staged.
    const streamed = await runCliProcess(['import', 'vouchers', unknown], env);
    expect(streamed.code).toBe(1);
    expect(JSON.parse(streamed.stderr)).toMatchObject({ status: 400, code: 'invalid_request', errors: [{ message: expect.stringContaining('colour') }] });
  });

  it.skipIf(!existsSync('/usr/bin/script'))('shows a progress bar on a terminal (stderr) and none when piped', async () => {
    const file = csv('tty.csv', 'code', Array.from({ length: 300 }, (_, i) => `TTY-${i}`));
    const command = [process.execPath, path.join(import.meta.dirname, '../../dist/src/cli/index.js'), 'import', 'vouchers', file, '--set', `campaignId=${campaignId}`]
      .map((word) => `'${word}'`)
      .join(' ');
    // script(1) gives the CLI a pseudo-terminal, as an operator's shell would.
    const onTerminal = await runCliProcess(['-qec', command, '/dev/null'], env, { entry: '/usr/bin/script', node: false });
    expect(onTerminal.stdout).toMatch(/merge  [█░]{20} 100% 300 rows, 0 rejected, \S+ left/);
    // Every frame of the bar fits 80 columns, so the estimate at its end is never cut off.
    // eslint-disable-next-line no-control-regex
    const frames = onTerminal.stdout.match(/(?:upload|merge ) [^\r\n\x1b]*/g) ?? [];
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame.trimEnd().length, frame).toBeLessThanOrEqual(80);
    const piped = await runCliProcess(['import', 'vouchers', file, '--set', `campaignId=${campaignId}`], env);
    expect(piped.stderr).toBe('');
    expect(JSON.parse(piped.stdout)).toMatchObject({ counts: { read: 300, rejected: 300 } });
  });

  it('stops at the first row when the key may not write', async () => {
    const readOnly = await service.newKey(['vouchers:read']);
    const file = csv('denied.csv', 'code', Array.from({ length: 500 }, (_, i) => `DENIED-${i}`));
    const streamed = await runCliProcess(['import', 'vouchers', file], { ...env, PROMOTIONS_API_KEY: readOnly });
    expect(streamed.code).toBe(1);
    expect(JSON.parse(streamed.stderr)).toMatchObject({ status: 403, code: 'forbidden' });
    const result = await runCliProcess(['import', 'vouchers.create', file, '--batch-size', '10', '--concurrency', '1'], { ...env, PROMOTIONS_API_KEY: readOnly });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.stopped).toMatch(/forbidden/);
    expect(report.rows).toBeLessThan(500);
  });
});
