// Member use cases shared by the API and the worker: joining a program (the card, loyalty.member.created) and placing
// members in tiers (loyalty.tier.changed), each inside the caller's transaction with its events.
import { randomBytes } from 'node:crypto';
import { problem } from '../../contract/problems.js';
import { sqlState, UNIQUE_VIOLATION, withTransaction, type Pool, type Sql } from '../../platform/database.js';
import { recordEvents, type NewEvent } from '../events/index.js';
import { type EventType } from '../../contract/event.schemas.js';
import { insertMemberCard, placeInTiers, findMember, type TierMove } from './member.queries.js';
import type { Member } from './member.schemas.js';

/** A transaction and its outbox: a unit of work of an operation, or one the worker opens (runLoyaltyWork). */
export interface LoyaltyWork {
  tx: Sql;
  emit(type: EventType, payload: Record<string, unknown>): void;
}

/** One worker transaction whose events are recorded before it commits. */
export async function runLoyaltyWork<T>(pool: Pool, workspaceId: string, work: (unit: LoyaltyWork) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (tx) => {
    const events: NewEvent[] = [];
    const result = await work({ tx, emit: (type, payload) => events.push({ workspaceId, type, payload }) });
    await recordEvents(tx, events);
    return result;
  });
}

const CODE_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function cardCode(): string {
  const bytes = randomBytes(12);
  return 'LC-' + [...bytes].map((b) => CODE_CHARS[b % CODE_CHARS.length]).join('');
}

function isCodeConflict(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION && (error as { constraint?: unknown }).constraint === 'vouchers_code_unique';
}

/**
 * Makes the customer a member: its card, and loyalty.member.created. `existing`: what to do when the customer is a
 * member already (`conflict`: a 409; `reuse`: answer that member, as autoJoin does). A given code in use is a 409.
 */
export async function joinProgram(
  { tx, emit }: LoyaltyWork,
  workspaceId: string,
  join: { programId: string; customerId: string; code?: string | undefined; metadata?: Record<string, unknown> | undefined },
  existing: 'conflict' | 'reuse',
): Promise<{ member: Member; created: boolean }> {
  let id: string | undefined;
  // A savepoint keeps the caller's transaction usable when the code is taken.
  await tx.query('SAVEPOINT join_program');
  try {
    id = await insertMemberCard(tx, workspaceId, { programId: join.programId, customerId: join.customerId, code: join.code ?? cardCode(), metadata: join.metadata ?? {} });
    await tx.query('RELEASE SAVEPOINT join_program');
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT join_program');
    if (isCodeConflict(error)) throw problem('conflict', `a voucher with code ${JSON.stringify(join.code)} exists in this workspace`);
    throw error;
  }
  if (!id) {
    if (existing === 'conflict') throw problem('conflict', 'the customer is a member of this program already');
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM vouchers WHERE workspace_id = $1 AND campaign_id = $2 AND customer_id = $3 AND type = 'LOYALTY_CARD'`,
      [workspaceId, join.programId, join.customerId],
    );
    return { member: (await findMember(tx, workspaceId, rows[0]!.id))!, created: false };
  }
  await placeMember({ tx, emit }, workspaceId, id);
  const member = (await findMember(tx, workspaceId, id))!;
  emit('loyalty.member.created', { memberId: id, programId: join.programId, customerId: join.customerId, code: member.code, points: member.balance });
  return { member, created: true };
}

function tierEvent(emit: LoyaltyWork['emit'], move: TierMove): void {
  emit('loyalty.tier.changed', {
    memberId: move.memberId,
    programId: move.programId,
    points: move.lifetime,
    fromTier: move.from,
    toTier: move.to,
  });
}

/** Places one member in its tier after its lifetime changed (earning, activation, reversal). */
export async function placeMember({ tx, emit }: LoyaltyWork, workspaceId: string, memberId: string): Promise<void> {
  for (const move of await placeInTiers(tx, workspaceId, { memberId })) tierEvent(emit, move);
}

/** Places every member of a program after its tiers changed; `excludeTierId`: a tier about to go. */
export async function placeProgramMembers({ tx, emit }: LoyaltyWork, workspaceId: string, programId: string, excludeTierId?: string): Promise<number> {
  const moves = await placeInTiers(tx, workspaceId, { programId, ...(excludeTierId ? { excludeTierId } : {}) });
  for (const move of moves) tierEvent(emit, move);
  return moves.length;
}
