// A process gives its partition leases up however its stop comes: a web process stopped while its start still waits
// for its share gives up what it took (the start is aborted, the engine stops), and a member gives up every lease the
// database names it for, one it took without knowing it (an acquisition whose answer was lost) included, which it
// serves meanwhile rather than renewing it for nobody.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { PartitionLeases } from '../../src/engine/leases/partition-leases.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { listensOn, spawnWebProcess } from '../support/processes.js';
import { until } from '../support/until.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const held = async () =>
  (await db.pool.query<{ slot: number; owner: string }>('SELECT slot, owner FROM partition_leases WHERE owner IS NOT NULL ORDER BY slot')).rows;

describe('partition leases at a stop', () => {
  it('are given up by a web process stopped while its start waits for its share', async () => {
    // Slots 8..63 are held by a transaction of the test: the acquisition (FOR UPDATE SKIP LOCKED) passes over them, so
    // the process takes 0..7 and its start keeps waiting for the rest (for two lease times).
    const locker = await db.pool.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT slot FROM partition_leases WHERE slot >= 8 FOR UPDATE');
    const bootstrap = generateApiKey();
    const service = await spawnWebProcess(db.url, bootstrap.key, { PARTITIONS: '1', PARTITION_LEASE_MS: '30000' });
    try {
      const port = Number(new URL(service.baseUrl).port);
      await until(async () => ((await held()).length === 8 ? true : undefined), 60_000, 'the process holding slots 0..7');
      expect(listensOn(service.child.pid!, port), 'the process is still starting').toBe(false);
      const { code } = await service.stop('SIGTERM');
      expect(code, service.output()).toBe(0);
      expect(await held(), service.output()).toEqual([]);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
      await service.stop('SIGKILL').catch(() => undefined);
    }
  });

  it('serves a lease it holds without knowing it, and gives it up at its stop', async () => {
    const log = createLogger('silent');
    const leaseDb: Pool = createPool(db.url, { max: 2, log });
    const gained: number[] = [];
    const leases = new PartitionLeases({ db: leaseDb, log, leaseMs: 900, url: 'http://127.0.0.1:1', onChange: (g) => gained.push(...g.map(([slot]) => slot)) });
    try {
      // Every slot but 40 taken by someone else, live for a minute: the member's share is 64, it can take only 40.
      await db.pool.query(`UPDATE partition_leases SET owner = gen_random_uuid(), url = 'http://127.0.0.1:2', expires_at = now() + interval '1 minute' WHERE slot <> 40`);
      await leases.start();
      expect(leases.status().owned).toEqual([40]);
      // Slot 41 set to the member behind its back, as an acquisition that committed but whose answer was lost.
      await db.pool.query(`UPDATE partition_leases SET owner = $1, token = token + 1, expires_at = now() + interval '1 minute' WHERE slot = 41`, [leases.memberId]);
      // Told to the router (onChange) at the end of the tick that found it.
      await until(async () => (gained.includes(41) ? true : undefined), 10_000, 'the member serving slot 41');
      expect(leases.status().owned).toEqual([40, 41]);
      const ownedByMember = (await held()).filter((r) => r.owner === leases.memberId).map((r) => r.slot);
      expect(ownedByMember).toEqual(leases.status().owned);
      // Slot 42 set to it as well, and the member stopped at once: the stop gives up what the database names it for,
      // whether or not a tick found it first.
      await db.pool.query(`UPDATE partition_leases SET owner = $1, token = token + 1, expires_at = now() + interval '1 minute' WHERE slot = 42`, [leases.memberId]);
      await leases.stop();
      expect((await held()).filter((r) => r.owner === leases.memberId)).toEqual([]);
    } finally {
      await leases.stop();
      await leaseDb.end();
      await db.pool.query(`UPDATE partition_leases SET owner = NULL, url = NULL, expires_at = '-infinity'`);
    }
  });
});
