// The web service's readiness checks: database reachable, migrations applied, a worker alive.
import type { Pool } from '../platform/database.js';
import { migrationStatus, type MigrationFile } from '../platform/migrations.js';
import { countLiveWorkers, HEARTBEAT_STALE_SECONDS } from '../jobs/index.js';
import type { ReadinessCheck } from './health.js';

export function databaseCheck(db: Pool): ReadinessCheck {
  return async () => {
    const started = performance.now();
    await db.query('SELECT 1');
    return { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
  };
}

export function migrationsCheck(db: Pool, files: MigrationFile[]): ReadinessCheck {
  return async () => {
    const { applied, expected } = await migrationStatus(db, files);
    return { ok: applied >= expected, applied, expected, ...(applied < expected ? { detail: `${expected - applied} migration(s) pending` } : {}) };
  };
}

export function workerCheck(db: Pool): ReadinessCheck {
  return async () => {
    const live = await countLiveWorkers(db);
    return live > 0 ? { ok: true, live } : { ok: false, live, detail: `no worker heartbeat in the last ${HEARTBEAT_STALE_SECONDS} s` };
  };
}

export function partitionsCheck(engine: { check(): Promise<{ ok: boolean; detail: string }> }): ReadinessCheck {
  return async () => engine.check();
}
