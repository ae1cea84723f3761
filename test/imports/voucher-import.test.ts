// POST /vouchers/import over real HTTP and a real PostgreSQL: a streamed CSV of 100,000 codes, rows refused alone with
// their row numbers, a second import of the same file, NDJSON gift cards, the body limits, the one audit entry.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';
import { awaitImport, csvChunks, discountCampaign, postBody, range } from './import-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const CSV = 'text/csv';
const NDJSON = 'application/x-ndjson';

describe('vouchers.import: happy path', () => {
  it('imports 100,000 codes streamed as CSV, with exact counts, one audit entry and codes that redeem', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    const count = 100_000;
    const lines = () => range(count, (i) => `IMP-${String(i).padStart(6, '0')}`);
    const started = performance.now();
    const posted = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, csvChunks('code', lines()), CSV);
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    expect(posted.body).toMatchObject({ kind: 'vouchers', format: 'csv', campaignId, counts: { read: count, rejected: 0 } });
    expect(['PENDING', 'RUNNING', 'SUCCEEDED']).toContain(posted.body.status);
    const done = await awaitImport(service, key, posted.body.id);
    console.log(`vouchers.import: ${count} codes in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(done).toMatchObject({ status: 'SUCCEEDED', counts: { read: count, inserted: count, rejected: 0 }, rejections: [], error: null });
    expect(done.startedAt).toBeTruthy();
    expect(done.finishedAt).toBeTruthy();

    const { rows } = await service.pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT code)::int AS codes, count(*) FILTER (WHERE redemption_limit = 1
         AND discount->>'type' = 'AMOUNT')::int AS templated FROM vouchers WHERE workspace_id = $1 AND campaign_id = $2`,
      [workspaceId, campaignId],
    );
    expect(rows[0]).toEqual({ n: count, codes: count, templated: count });

    const audit = await service.pool.query('SELECT operation, resource_type, resource_id, request_id FROM audit_entries WHERE workspace_id = $1 AND operation = $2', [
      workspaceId,
      'vouchers.import',
    ]);
    expect(audit.rows).toEqual([{ operation: 'vouchers.import', resource_type: 'import', resource_id: posted.body.id, request_id: posted.requestId }]);
    const events = await service.pool.query("SELECT payload FROM events WHERE workspace_id = $1 AND type = 'import.succeeded'", [workspaceId]);
    expect(events.rows).toEqual([{ payload: { importId: posted.body.id, kind: 'vouchers', counts: { read: count, inserted: count, rejected: 0 } } }]);

    const redeemed = await service.api(key).post('/api/v1/vouchers/IMP-099999/redemption', { order: { amount: 2_000, currency: 'EUR' } });
    expect(redeemed.body).toMatchObject({ ok: true, redemption: { amount: 500 } });

    // The same file again: every row is refused as existing, nothing is inserted.
    const again = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, csvChunks('code', lines()), CSV);
    expect(again.status).toBe(202);
    const second = await awaitImport(service, key, again.body.id);
    expect(second).toMatchObject({ status: 'SUCCEEDED', counts: { read: count, inserted: 0, rejected: count } });
    expect(second.rejections).toHaveLength(100);
    expect(second.rejections[0]).toEqual({ row: 1, code: 'code_exists', reason: expect.any(String) });
    expect(second.rejections.every((r: any, i: number) => r.row === i + 1 && r.code === 'code_exists')).toBe(true);
  }, 120_000);

  it('refuses bad rows alone, each with its row number and reason, while the good rows land with their own fields', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    const gifts = await service.api(key).create('/api/v1/campaigns', {
      name: 'Gifts',
      type: 'GIFT_VOUCHERS',
      voucher: { gift: { amount: 2_500, currency: 'EUR' } },
    });
    await service.api(key).create('/api/v1/vouchers', { code: 'TAKEN', campaignId });
    const csv = [
      'code,campaignId,redemptionLimit,expirationDate,startDate,gift.amount,metadata.batch',
      `GOOD-1,,3,,,,b1`, // 1
      `GOOD-2,${gifts.id},,,,7000,`, // 2: a gift card with its own amount
      `GOOD-1,,,,,,`, // 3: repeats row 1
      `bad code!,,,,,,`, // 4
      `GOOD-3,,many,,,,`, // 5
      `GOOD-4,00000000-0000-4000-8000-000000000000,,,,,`, // 6: no such campaign
      `GOOD-5,,,2026-01-01T00:00:00Z,2026-02-01T00:00:00Z,,`, // 7: ends before it starts
      `GOOD-6,,,,,100,`, // 8: gift credits on a discount voucher
      `TAKEN,,,,,,`, // 9
      `GOOD-7,,,,,9007199254740992,`, // 10: past 2^53-1
      `GOOD-8,,1,2030-01-01T00:00:00Z`, // 11: too few cells
      `GOOD-9,,,,,,x`, // 12
    ].join('\n');
    const posted = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, csv, CSV);
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const done = await awaitImport(service, key, posted.body.id);
    expect(done.counts).toEqual({ read: 12, inserted: 3, rejected: 9 });
    expect(done.rejections.map((r: any) => [r.row, r.code])).toEqual([
      [3, 'duplicate_in_file'],
      [4, 'invalid_row'],
      [5, 'invalid_row'],
      [6, 'campaign_not_found'],
      [7, 'invalid_row'],
      [8, 'invalid_row'],
      [9, 'code_exists'],
      [10, 'invalid_row'],
      [11, 'invalid_row'],
    ]);
    expect(done.rejections[0].reason).toBe('repeats row 1');
    expect(done.rejections[1].reason).toMatch(/^code: /);
    expect(done.rejections[2].reason).toMatch(/^redemptionLimit: /);

    const { rows } = await service.pool.query(
      `SELECT code, type, redemption_limit, gift_amount, gift_balance, metadata FROM vouchers WHERE workspace_id = $1 AND code LIKE 'GOOD-%' ORDER BY code`,
      [workspaceId],
    );
    expect(rows).toEqual([
      { code: 'GOOD-1', type: 'DISCOUNT', redemption_limit: 3, gift_amount: null, gift_balance: null, metadata: { batch: 'b1' } },
      { code: 'GOOD-2', type: 'GIFT_CARD', redemption_limit: null, gift_amount: 7_000, gift_balance: 7_000, metadata: {} },
      { code: 'GOOD-9', type: 'DISCOUNT', redemption_limit: 1, gift_amount: null, gift_balance: null, metadata: { batch: 'x' } },
    ]);
    const ledger = await service.api(key).get('/api/v1/vouchers/GOOD-2/transactions');
    expect(ledger.body.data).toEqual([expect.objectContaining({ type: 'CREDITS_ADDED', amount: 7_000, balanceAfter: 7_000 })]);
  });

  it('imports NDJSON, and rows sent as JSON text through RPC', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    // A code validated before it exists is known to the engine as missing: the import makes it read again.
    const before = await service.api(key).post('/api/v1/vouchers/ND-3/validate', { order: { amount: 2_000, currency: 'EUR' } });
    expect(before.body).toMatchObject({ valid: false, code: 'voucher_not_found' });
    const ndjson = [
      JSON.stringify({ code: 'ND-1', campaignId, metadata: { source: 'crm', nested: { a: 1 } }, active: false }),
      '',
      JSON.stringify({ code: 'ND-2', colour: 'red' }),
      '[1,2]',
      JSON.stringify({ code: 'ND-3', maxDiscount: 250 }),
    ].join('\n');
    const posted = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, ndjson, NDJSON);
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const done = await awaitImport(service, key, posted.body.id);
    expect(done).toMatchObject({ format: 'ndjson', counts: { read: 4, inserted: 2, rejected: 2 } });
    expect(done.rejections.map((r: any) => [r.row, r.code])).toEqual([
      [3, 'invalid_row'],
      [4, 'invalid_row'],
    ]);
    const { rows } = await service.pool.query('SELECT code, active, max_discount, metadata FROM vouchers WHERE workspace_id = $1 ORDER BY code', [workspaceId]);
    expect(rows).toEqual([
      { code: 'ND-1', active: false, max_discount: null, metadata: { source: 'crm', nested: { a: 1 } } },
      { code: 'ND-3', active: true, max_discount: 250, metadata: {} },
    ]);

    const after = await service.api(key).post('/api/v1/vouchers/ND-3/validate', { order: { amount: 2_000, currency: 'EUR' } });
    expect(after.body).toMatchObject({ valid: true, discount: { amount: 250 } });

    const rpc = await fetch(`${service.baseUrl}/api/rpc/vouchers.import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ campaignId, format: 'csv', rows: 'code\nRPC-1\nRPC-2\n' }),
    });
    const job = (await rpc.json()) as any;
    expect(rpc.status, JSON.stringify(job)).toBe(202);
    expect(await awaitImport(service, key, job.id)).toMatchObject({ status: 'SUCCEEDED', counts: { read: 2, inserted: 2 } });
  });
});

describe('vouchers.import: currency', () => {
  it("gives imported codes the workspace's default currency when their campaign's money template names none", async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const api = service.api(key);
    await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    const campaign = await api.create('/api/v1/campaigns', { name: 'Unpriced', type: 'DISCOUNT_COUPONS', voucher: { discount: { type: 'AMOUNT', amountOff: 500 } } });
    const posted = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaign.id}`, key, 'code\nDEF-1\nDEF-2\n', CSV);
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    expect(await awaitImport(service, key, posted.body.id)).toMatchObject({ status: 'SUCCEEDED', counts: { read: 2, inserted: 2 } });
    const { rows } = await service.pool.query('SELECT code, currency FROM vouchers WHERE workspace_id = $1 ORDER BY code', [workspaceId]);
    expect(rows).toEqual([{ code: 'DEF-1', currency: 'EUR' }, { code: 'DEF-2', currency: 'EUR' }]);
  });
});

describe('vouchers.import: races', () => {
  it('lands each code once when imports of the same codes race, without a deadlock, and their counts add up', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    const codes = Array.from({ length: 20_000 }, (_, i) => `RACE-${i}`);
    const orders = [codes, [...codes].reverse(), codes.filter((_, i) => i % 2).concat(codes.filter((_, i) => i % 2 === 0)), [...codes].sort()];
    const posted = await Promise.all(
      orders.map((order) => postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, csvChunks('code', order), CSV)),
    );
    const jobs = await Promise.all(posted.map((p) => awaitImport(service, key, p.body.id)));
    expect(jobs.map((j) => j.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(jobs.reduce((sum, j) => sum + j.counts.inserted, 0)).toBe(codes.length);
    expect(jobs.reduce((sum, j) => sum + j.counts.rejected, 0)).toBe(codes.length * 3);
    for (const job of jobs) expect(job.counts.inserted + job.counts.rejected).toBe(codes.length);
    const { rows } = await service.pool.query('SELECT count(*)::int AS n, count(DISTINCT code)::int AS codes FROM vouchers WHERE workspace_id = $1', [workspaceId]);
    expect(rows[0]).toEqual({ n: codes.length, codes: codes.length });
  }, 60_000);
});

describe('vouchers.import: errors', () => {
  it('refuses a body that is not CSV or NDJSON, unknown columns, broken CSV and bytes that are not UTF-8, creating nothing', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    const path = `/api/v1/vouchers/import?campaignId=${campaignId}`;
    const plain = await postBody(service.baseUrl, path, key, 'code\nX-1\n', 'text/plain');
    expect(plain).toMatchObject({ status: 415, body: { code: 'unsupported_media_type' } });
    const unknown = await postBody(service.baseUrl, path, key, 'code,colour\nX-1,red\n', CSV);
    expect(unknown).toMatchObject({ status: 400, body: { code: 'invalid_request', errors: [{ path: 'body', message: expect.stringContaining('colour') }] } });
    const noCode = await postBody(service.baseUrl, path, key, 'redemptionLimit\n1\n', CSV);
    expect(noCode.status).toBe(400);
    const broken = await postBody(service.baseUrl, path, key, 'code\n"X-1\nX-2\n', CSV);
    expect(broken).toMatchObject({ status: 400, body: { errors: [{ path: 'body', message: expect.stringContaining('CSV') }] } });
    const latin1 = await fetch(service.baseUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': CSV },
      body: Buffer.from([0x63, 0x6f, 0x64, 0x65, 0x0a, 0x58, 0xe9, 0x0a]),
    });
    expect(latin1.status).toBe(400);
    const empty = await postBody(service.baseUrl, path, key, 'code\n', CSV);
    expect(empty.status).toBe(400);
    const badQuery = await postBody(service.baseUrl, '/api/v1/vouchers/import?campaignId=nope', key, 'code\nX-1\n', CSV);
    expect(badQuery).toMatchObject({ status: 400, body: { errors: [{ path: 'query.campaignId' }] } });
    const { rows } = await service.pool.query('SELECT (SELECT count(*) FROM imports WHERE workspace_id = $1)::int AS imports, (SELECT count(*) FROM vouchers WHERE workspace_id = $1)::int AS vouchers', [workspaceId]);
    expect(rows[0]).toEqual({ imports: 0, vouchers: 0 });
  });

  it('answers 413 for a body past the import limit, declared or streamed, and imports nothing', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    // A declared length past IMPORT_MAX_BYTES (1 GiB by default) is refused before a byte is read.
    const declared = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${service.baseUrl}/api/v1/vouchers/import?campaignId=${campaignId}`);
      const req = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': CSV, 'content-length': String(2 ** 31) } }, (res) => {
        resolve(res.statusCode!);
        res.resume();
        req.destroy();
      });
      req.on('error', reject);
      req.write('code\nBIG-1\n');
    });
    expect(declared).toBe(413);

    // A chunked body that grows past the limit of an app configured with 64 KiB.
    const { restFace } = service.service;
    const app = createApp({ pipeline: service.service.pipeline, log: createLogger('silent'), version: restFace.version, maxBodyBytes: 1_048_576, importMaxBytes: 65_536, readinessChecks: {}, restFace });
    const server: Server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const small = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const over = await postBody(small, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, csvChunks('code', range(20_000, (i) => `OVER-${i}`)), CSV);
      expect(over).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
      const under = await postBody(small, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, csvChunks('code', range(100, (i) => `UNDER-${i}`)), CSV);
      expect(under.status).toBe(202);
      expect(await awaitImport(service, key, under.body.id)).toMatchObject({ counts: { inserted: 100 } });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const { rows } = await service.pool.query("SELECT count(*)::int AS n FROM vouchers WHERE workspace_id = $1 AND code LIKE 'OVER-%'", [workspaceId]);
    expect(rows[0].n).toBe(0);
  });
});

describe('vouchers.import: staging', () => {
  it('drops the staging tables of an import whose session is gone, and keeps none of its own', async () => {
    const { key } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    const orphan = 'ab'.repeat(16);
    await service.pool.query(`CREATE UNLOGGED TABLE import_rows_${orphan} (line bigint)`);
    await service.pool.query(`CREATE UNLOGGED TABLE import_rejections_${orphan} (line bigint)`);
    const posted = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, 'code\nSTAGED-1\n', CSV);
    await awaitImport(service, key, posted.body.id);
    // The tables go right after the import's last statement (within moments of SUCCEEDED).
    await expect
      .poll(async () => (await service.pool.query("SELECT relname FROM pg_class WHERE relkind = 'r' AND relname ~ '^import_(rows|rejections|templates)_'")).rows, { timeout: 5_000 })
      .toEqual([]);
  });
});

describe('vouchers.import: a stopped process', () => {
  it('shows a RUNNING import whose heartbeat stopped 5 minutes ago as FAILED', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const { rows } = await service.pool.query(
      `INSERT INTO imports (workspace_id, kind, status, format, rows_read, heartbeat_at) VALUES ($1, 'vouchers', 'RUNNING', 'csv', 10, now() - interval '6 minutes') RETURNING id`,
      [workspaceId],
    );
    const res = await service.api(key).get(`/api/v1/imports/${rows[0].id}`);
    expect(res.body).toMatchObject({ status: 'FAILED', error: expect.stringContaining('stopped'), finishedAt: expect.any(String) });
  });
});

describe('vouchers.import: security', () => {
  it('needs vouchers:write, and an import of another workspace is not found', async () => {
    const { key } = await service.newWorkspace();
    const campaignId = await discountCampaign(service, key);
    const reader = await service.newWorkspace(['vouchers:read']);
    const denied = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, reader.key, 'code\nNO-1\n', CSV);
    expect(denied).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    const anonymous = await fetch(`${service.baseUrl}/api/v1/vouchers/import`, { method: 'POST', headers: { 'content-type': CSV }, body: 'code\nNO-1\n' });
    expect(anonymous.status).toBe(401);

    const posted = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, key, 'code\nMINE-1\n', CSV);
    await awaitImport(service, key, posted.body.id);
    const other = await service.newWorkspace();
    expect((await other.api.get(`/api/v1/imports/${posted.body.id}`)).status).toBe(404);
    // Another workspace's campaign is no campaign here.
    const foreign = await postBody(service.baseUrl, `/api/v1/vouchers/import?campaignId=${campaignId}`, other.key, 'code\nTHEIRS-1\n', CSV);
    expect(await awaitImport(service, other.key, foreign.body.id)).toMatchObject({ counts: { inserted: 0, rejected: 1 }, rejections: [{ row: 1, code: 'campaign_not_found' }] });
  });

  it('lists the streamed media types in the OpenAPI document', async () => {
    const res = await fetch(`${service.baseUrl}/api/openapi.json`);
    const document = (await res.json()) as any;
    const content = document.paths['/api/v1/vouchers/import'].post.requestBody.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/x-ndjson', 'text/csv']);
    expect(document.paths['/api/v1/imports/{id}'].get.operationId).toBe('imports.get');
  });
});
