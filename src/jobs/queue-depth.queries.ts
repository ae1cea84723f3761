// How many jobs wait in each pg-boss queue: due now (the backlog) or scheduled later (retries at their time).
import type { Sql } from '../platform/database.js';
import { JOB_SCHEMA } from './job-queue.js';

export interface QueueDepth {
  queue: string;
  due: number;
  scheduled: number;
}

/** Every queue created (0 when empty), counted through pg-boss's partial index of waiting jobs (created or retry). */
export async function readQueueDepths(db: Sql): Promise<QueueDepth[]> {
  const { rows } = await db.query<{ name: string; due: number; scheduled: number }>(
    `SELECT q.name, count(j.id) FILTER (WHERE j.start_after <= now())::int AS due, count(j.id) FILTER (WHERE j.start_after > now())::int AS scheduled
     FROM ${JOB_SCHEMA}.queue q LEFT JOIN ${JOB_SCHEMA}.job j ON j.name = q.name AND j.state < 'active'
     GROUP BY q.name ORDER BY q.name`,
  );
  return rows.map((r) => ({ queue: r.name, due: r.due, scheduled: r.scheduled }));
}
