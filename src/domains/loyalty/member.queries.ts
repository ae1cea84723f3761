// SQL of loyalty members (LOYALTY_CARD voucher rows with their points caches) and of tier placement. Parameterized,
// explicit columns, one row mapper; every statement is scoped to a workspace.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { Member, PageQuery } from './member.schemas.js';

// A member row: the card, its tier, and its next expiries (ACTIVE buckets holding points, by expiry instant).
const MEMBERS = `(SELECT v.workspace_id, v.id, v.campaign_id, v.customer_id, v.code, v.active, v.points_balance, v.points_pending,
    v.points_lifetime, v.metadata, v.created_at, t.id AS tier_id, t.name AS tier_name
  FROM vouchers v LEFT JOIN loyalty_tiers t ON t.id = v.loyalty_tier_id
  WHERE v.type = 'LOYALTY_CARD' AND v.campaign_id IS NOT NULL) AS members`;
const COLUMNS = `id, campaign_id, customer_id, code, active, points_balance, points_pending, points_lifetime, metadata, created_at,
  tier_id, tier_name,
  (SELECT coalesce(json_agg(json_build_object('date', x.expires_at, 'points', x.points) ORDER BY x.expires_at), '[]')
     FROM (SELECT b.expires_at, sum(b.remaining) AS points FROM loyalty_point_buckets b
            WHERE b.member_id = members.id AND b.status = 'ACTIVE' AND b.remaining > 0 AND b.expires_at IS NOT NULL
            GROUP BY b.expires_at ORDER BY b.expires_at LIMIT 5) x) AS expiring`;

interface MemberRow {
  [column: string]: unknown;
  id: string;
  campaign_id: string;
  customer_id: string | null;
  code: string;
  active: boolean;
  points_balance: number;
  points_pending: number;
  points_lifetime: number;
  metadata: Record<string, unknown>;
  created_at: Date;
  tier_id: string | null;
  tier_name: string | null;
  expiring: Array<{ date: string; points: number }>;
}

function toMember(row: MemberRow): Member {
  return {
    id: row.id,
    programId: row.campaign_id,
    customerId: row.customer_id,
    code: row.code,
    active: row.active,
    balance: row.points_balance,
    pendingBalance: row.points_pending,
    lifetimeEarned: row.points_lifetime,
    ...(row.tier_id ? { tier: { id: row.tier_id, name: row.tier_name ?? '' } } : {}),
    expiring: row.expiring.map((e) => ({ date: new Date(e.date).toISOString(), points: Number(e.points) })),
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
  };
}

export async function findMember(db: Sql, workspaceId: string, memberId: string): Promise<Member | undefined> {
  const { rows } = await db.query<MemberRow>(`SELECT ${COLUMNS} FROM ${MEMBERS} WHERE workspace_id = $1 AND id = $2`, [workspaceId, memberId]);
  return rows[0] && toMember(rows[0]);
}

/** The id of the customer's card in the program, if any. */
export async function findMemberId(db: Sql, workspaceId: string, programId: string, customerId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM vouchers WHERE workspace_id = $1 AND campaign_id = $2 AND customer_id = $3 AND type = 'LOYALTY_CARD'`,
    [workspaceId, programId, customerId],
  );
  return rows[0]?.id;
}

export async function findCustomerMembers(db: Sql, workspaceId: string, customerId: string): Promise<Member[]> {
  const { rows } = await db.query<MemberRow>(
    `SELECT ${COLUMNS} FROM ${MEMBERS} WHERE workspace_id = $1 AND customer_id = $2 ORDER BY created_at, id LIMIT 100`,
    [workspaceId, customerId],
  );
  return rows.map(toMember);
}

export function listMembers(db: Sql, cursors: CursorCodec, workspaceId: string, programId: string, page: PageQuery) {
  return keysetPage<MemberRow, Member>(
    db,
    cursors,
    { list: `loyalty.listMembers:${programId}`, from: MEMBERS, columns: COLUMNS, where: ['workspace_id = $1', 'campaign_id = $2'], params: [workspaceId, programId], map: toMember },
    page,
  );
}

/**
 * The card of a new member; undefined when the customer is a member already (the unique index on program and
 * customer). Throws UNIQUE_VIOLATION (vouchers_code_unique) for a code in use.
 */
export async function insertMemberCard(
  tx: Sql,
  workspaceId: string,
  card: { programId: string; customerId: string; code: string; metadata: Record<string, unknown> },
): Promise<string | undefined> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO vouchers (workspace_id, code, campaign_id, type, customer_id, metadata)
     VALUES ($1, $2, $3, 'LOYALTY_CARD', $4, $5)
     ON CONFLICT (campaign_id, customer_id) WHERE type = 'LOYALTY_CARD' AND customer_id IS NOT NULL DO NOTHING
     RETURNING id`,
    [workspaceId, card.code, card.programId, card.customerId, card.metadata],
  );
  return rows[0]?.id;
}

export interface TierMove {
  memberId: string;
  programId: string;
  lifetime: number;
  from: { id: string; name: string } | null;
  to: { id: string; name: string } | null;
}

/**
 * Places members in the highest tier their lifetime reaches (one member, or every member of a program), under the
 * row lock of each card; returns the moves. `excludeTierId`: a tier about to be deleted.
 */
export async function placeInTiers(
  tx: Sql,
  workspaceId: string,
  target: { memberId: string } | { programId: string; excludeTierId?: string },
): Promise<TierMove[]> {
  const byMember = 'memberId' in target;
  const { rows } = await tx.query<{
    id: string;
    campaign_id: string;
    points_lifetime: number;
    from_id: string | null;
    from_name: string | null;
    to_id: string | null;
    to_name: string | null;
  }>(
    `WITH cards AS (
       SELECT v.id, v.campaign_id, v.points_lifetime, v.loyalty_tier_id FROM vouchers v
        WHERE v.workspace_id = $1 AND v.type = 'LOYALTY_CARD' AND ${byMember ? 'v.id = $2' : 'v.campaign_id = $2'}
        ORDER BY v.id FOR UPDATE
     ), placed AS (
       SELECT c.id, c.campaign_id, c.points_lifetime, c.loyalty_tier_id AS from_id,
              (SELECT t.id FROM loyalty_tiers t
                WHERE t.program_id = c.campaign_id AND t.min_points <= c.points_lifetime AND t.id IS DISTINCT FROM $3::uuid
                ORDER BY t.min_points DESC LIMIT 1) AS to_id
         FROM cards c
     ), moved AS (
       UPDATE vouchers v SET loyalty_tier_id = p.to_id FROM placed p
        WHERE v.id = p.id AND p.from_id IS DISTINCT FROM p.to_id
       RETURNING v.id, p.campaign_id, p.points_lifetime, p.from_id, p.to_id
     )
     SELECT m.id, m.campaign_id, m.points_lifetime, m.from_id, f.name AS from_name, m.to_id, t.name AS to_name
       FROM moved m LEFT JOIN loyalty_tiers f ON f.id = m.from_id LEFT JOIN loyalty_tiers t ON t.id = m.to_id`,
    [workspaceId, byMember ? target.memberId : target.programId, byMember ? null : (target.excludeTierId ?? null)],
  );
  return rows.map((r) => ({
    memberId: r.id,
    programId: r.campaign_id,
    lifetime: r.points_lifetime,
    from: r.from_id ? { id: r.from_id, name: r.from_name ?? '' } : null,
    to: r.to_id ? { id: r.to_id, name: r.to_name ?? '' } : null,
  }));
}

/** The tier multiplier of a member in ten-thousandths (10000 = ×1). */
export async function findMultiplier(db: Sql, memberId: string): Promise<bigint> {
  const { rows } = await db.query<{ m: string | null }>(
    `SELECT round(t.multiplier * 10000)::text AS m FROM vouchers v JOIN loyalty_tiers t ON t.id = v.loyalty_tier_id WHERE v.id = $1`,
    [memberId],
  );
  return BigInt(rows[0]?.m ?? '10000');
}
