// Heartbeats of background worker processes: written by each worker, read by the web service's /ready.
import type { Sql } from '../platform/database.js';

export const HEARTBEAT_INTERVAL_MS = 5_000;
export const HEARTBEAT_STALE_SECONDS = 20;

export async function recordHeartbeat(db: Sql, worker: { id: string; pid: number; host: string }): Promise<void> {
  await db.query(
    `INSERT INTO worker_heartbeats (worker_id, pid, host) VALUES ($1, $2, $3)
     ON CONFLICT (worker_id) DO UPDATE SET beat_at = now()`,
    [worker.id, worker.pid, worker.host],
  );
}

export async function removeHeartbeat(db: Sql, workerId: string): Promise<void> {
  await db.query('DELETE FROM worker_heartbeats WHERE worker_id = $1', [workerId]);
}

export async function countLiveWorkers(db: Sql): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM worker_heartbeats WHERE beat_at > now() - make_interval(secs => $1)`,
    [HEARTBEAT_STALE_SECONDS],
  );
  return rows[0]?.count ?? 0;
}
