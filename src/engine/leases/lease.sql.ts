// The statements of partition ownership (schema/0034): members' heartbeats, and leases taken, renewed and released.
// Every expiry is computed by the database's clock, so members on machines whose clocks differ still agree.
import type { Sql } from '../../platform/database.js';

export interface LeaseRow {
  [column: string]: unknown;
  slot: number;
  owner: string | null;
  url: string | null;
  token: number;
  /** The lease is current (not expired) by the database's clock. */
  live: boolean;
}

export interface Member {
  memberId: string;
  url: string;
  pid: number;
  host: string;
}

/** Records this member as alive, forgets members silent for `forgetMs`, and answers the ids of the members alive now. */
export async function heartbeat(db: Sql, member: Member, leaseMs: number, forgetMs: number): Promise<string[]> {
  const { rows } = await db.query<{ members: string[] }>(
    `WITH me AS (
       INSERT INTO engine_members (member_id, url, pid, host) VALUES ($1, $2, $3, $4)
       ON CONFLICT (member_id) DO UPDATE SET seen_at = now(), url = EXCLUDED.url
       RETURNING member_id
     ), gone AS (
       DELETE FROM engine_members WHERE seen_at < now() - make_interval(secs => $6::double precision / 1000) RETURNING 1
     )
     SELECT array_append(array_agg(member_id::text) FILTER (WHERE member_id <> $1), $1::text) AS members FROM engine_members
      WHERE seen_at >= now() - make_interval(secs => $5::double precision / 1000)`,
    [member.memberId, member.url, member.pid, member.host, leaseMs, forgetMs],
  );
  return rows[0]!.members;
}

/** Extends every lease this member holds; answers the ones it still holds (a lease lost meanwhile is not among them). */
export async function renewLeases(db: Sql, memberId: string, leaseMs: number): Promise<Array<{ slot: number; token: number }>> {
  const { rows } = await db.query<{ slot: number; token: number }>(
    `UPDATE partition_leases SET expires_at = now() + make_interval(secs => $2::double precision / 1000)
      WHERE owner = $1 AND expires_at > now()
      RETURNING slot, token`,
    [memberId, leaseMs],
  );
  return rows;
}

/**
 * Takes up to `count` free or expired leases (skipping any a write holds: those are taken at a later tick), each with
 * a new token. FOR UPDATE waits for nothing and conflicts with the KEY SHARE lock a fenced engine write holds.
 */
export async function acquireLeases(db: Sql, member: Member, count: number, leaseMs: number): Promise<Array<{ slot: number; token: number }>> {
  if (count <= 0) return [];
  const { rows } = await db.query<{ slot: number; token: number }>(
    `UPDATE partition_leases l
        SET owner = $1, url = $2, token = l.token + 1, expires_at = now() + make_interval(secs => $4::double precision / 1000)
      WHERE l.slot IN (SELECT slot FROM partition_leases
                        WHERE owner IS NULL OR expires_at <= now()
                        ORDER BY slot LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING l.slot, l.token`,
    [member.memberId, member.url, count, leaseMs],
  );
  return rows;
}

/** Gives leases up at once (rebalancing, or a stop): their next owner takes them without waiting for the expiry. */
export async function releaseLeases(db: Sql, memberId: string, slots: readonly number[]): Promise<void> {
  if (slots.length === 0) return;
  await db.query(`UPDATE partition_leases SET owner = NULL, url = NULL, expires_at = '-infinity' WHERE owner = $1 AND slot = ANY($2::int[])`, [
    memberId,
    slots,
  ]);
}

/** Gives up every lease the database names this member for, known to it or not (an acquisition whose answer was lost). */
export async function releaseEveryLease(db: Sql, memberId: string): Promise<void> {
  await db.query(`UPDATE partition_leases SET owner = NULL, url = NULL, expires_at = '-infinity' WHERE owner = $1`, [memberId]);
}

export async function leaveMembers(db: Sql, memberId: string): Promise<void> {
  await db.query(`DELETE FROM engine_members WHERE member_id = $1`, [memberId]);
}

export async function loadLeases(db: Sql): Promise<LeaseRow[]> {
  const { rows } = await db.query<LeaseRow>(`SELECT slot, owner, url, token, expires_at > now() AS live FROM partition_leases ORDER BY slot`);
  return rows;
}

export async function loadEngineSecret(db: Sql): Promise<string> {
  const { rows } = await db.query<{ secret: string }>(`SELECT secret FROM engine_secret`);
  return rows[0]!.secret;
}
