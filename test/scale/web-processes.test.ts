// `npm start` with WEB_PROCESSES=2: one port, two web processes that split the 64 partition slots, a race through the
// one port that stays exact, a killed web process replaced by the primary (its slots taken back), and a stop that
// gives every lease up.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { spawnWebProcess, type ServiceProcess } from '../support/processes.js';
import { until } from '../support/until.js';

let db: TestDatabase;
let service: ServiceProcess;
const bootstrap = generateApiKey();

const owners = async () =>
  (
    await db.pool.query<{ owner: string | null; pid: number | null; slots: number }>(
      `SELECT l.owner, m.pid, count(*)::int AS slots FROM partition_leases l LEFT JOIN engine_members m ON m.member_id = l.owner
        WHERE l.owner IS NULL OR l.expires_at > now() GROUP BY 1, 2 ORDER BY 1`,
    )
  ).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await spawnWebProcess(db.url, bootstrap.key, { WEB_PROCESSES: '2', PARTITIONS: '1', PARTITION_LEASE_MS: '2000' });
  await service.waitForReady();
}, 120_000);
afterAll(async () => {
  await service?.stop('SIGKILL').catch(() => undefined);
  await db?.drop();
});

describe('WEB_PROCESSES=2', () => {
  it('splits the slots 32/32 between two web processes on one port and keeps a race through it exact', async () => {
    const split = await until(async () => {
      const rows = await owners();
      return rows.length === 2 && rows.every((r) => r.owner !== null && r.slots === 32) ? rows : undefined;
    }, 20_000, 'two members holding 32 slots each');
    expect(new Set(split.map((r) => r.pid)).size).toBe(2);
    expect(split.map((r) => r.pid)).not.toContain(service.child.pid);

    const headers = { authorization: `Bearer ${bootstrap.key}`, 'content-type': 'application/json' };
    const code = `WEB-${randomUUID().slice(0, 8)}`;
    const create = await fetch(`${service.baseUrl}/api/v1/vouchers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 50 }),
    });
    expect(create.status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        fetch(`${service.baseUrl}/api/v1/vouchers/${code}/redemption`, { method: 'POST', headers, body: JSON.stringify({ order: { amount: 1000, currency: 'EUR' } }) }).then(
          async (r) => ({ status: r.status, ok: ((await r.json()) as { ok?: boolean }).ok }),
        ),
      ),
    );
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => a.ok)).toHaveLength(50);
    const { rows } = await db.pool.query('SELECT redeemed_count FROM vouchers WHERE code = $1', [code]);
    expect(rows[0]!.redeemed_count).toBe(50);
  });

  it('replaces a killed web process; the slots end split between the survivor and the new one', async () => {
    const [victim] = (await owners()).filter((r) => r.pid !== null);
    process.kill(victim!.pid!, 'SIGKILL');
    // 30 s did not do on a starved machine (two busy loops beside the suite): the new process's start and its leases.
    const after = await until(async () => {
      const rows = await owners();
      return rows.length === 2 && rows.every((r) => r.owner !== null && r.pid !== victim!.pid && r.slots === 32) ? rows : undefined;
    }, 90_000, 'two live members again, neither the killed one');
    expect(after).toHaveLength(2);
    expect((await fetch(`${service.baseUrl}/ready`)).status).toBe(200);
  });

  it('gives every lease up when stopped', async () => {
    const { code } = await service.stop('SIGINT');
    expect(code).toBe(0);
    const rows = await db.pool.query<{ held: number }>('SELECT count(*)::int AS held FROM partition_leases WHERE owner IS NOT NULL');
    expect(rows.rows[0]!.held, service.output()).toBe(0);
  });
});
