// Points operations of the API (adjustments, transfers; custom events are orchestration/'s), each one unit of work with its idempotency
// key: the key is claimed first in the transaction (a concurrent request with the same key waits for it, then
// replays), the outcome is stored with the change. A refusal changes nothing and writes no audit entry; its outcome is
// stored under the key on its own so that a replay answers it again.
import type { IdempotencyClaim } from '../../contract/engine-port.js';
import type { HandlerContext, UnitOfWork } from '../../contract/handler.js';
import type { Operation } from '../../contract/operation.js';
import { invalidField, problem } from '../../contract/problems.js';
import { withTransaction, type Sql } from '../../platform/database.js';
import { requireCustomer } from '../customers/index.js';
import type { ExplanationCode } from '../../contract/checkout.schemas.js';
import { expiryOf } from './earning.rules.js';
import { findMember } from './member.queries.js';
import type { PointsBody, PointsOutcome, TransferBody, TransferOutcome } from './member.schemas.js';
import { debitPoints, findDrawnExpiries, findEntries, grantPoints, isPointsOutOfRange, lockCards } from './points-ledger.queries.js';
import { findProgramSettings } from './reaction.queries.js';

/** A business refusal: the transaction rolls back and the outcome is answered (and kept under the key). */
class Refusal {
  constructor(readonly outcome: { ok: false; code: ExplanationCode; message: string; explanations?: Array<Record<string, unknown>> }) {}
}

class Replay {
  constructor(readonly response: Record<string, unknown>) {}
}

export function refuse(code: ExplanationCode, message: string, details?: Record<string, unknown>): never {
  throw new Refusal({ ok: false, code, message, ...(details ? { explanations: [{ code, message, ...details }] } : {}) });
}

/** Claims the key in `tx`; the stored response when the key was used before by the same request, 409 for another. */
async function claimKey(tx: Sql, workspaceId: string, claim: IdempotencyClaim): Promise<Record<string, unknown> | undefined> {
  const inserted = await tx.query(
    `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response) VALUES ($1, $2, $3, '{}') ON CONFLICT DO NOTHING RETURNING 1`,
    [workspaceId, claim.key, claim.hash],
  );
  if ((inserted.rowCount ?? 0) > 0) return undefined;
  const { rows } = await tx.query<{ request_hash: string; response: Record<string, unknown> }>(
    'SELECT request_hash, response FROM idempotency_keys WHERE workspace_id = $1 AND key = $2',
    [workspaceId, claim.key],
  );
  const stored = rows[0];
  if (!stored || stored.request_hash !== claim.hash) throw problem('idempotency_conflict', 'this idempotency key was used with a different request');
  return stored.response;
}

async function storeResponse(tx: Sql, workspaceId: string, key: string, response: unknown): Promise<void> {
  await tx.query('UPDATE idempotency_keys SET response = $3 WHERE workspace_id = $1 AND key = $2', [workspaceId, key, JSON.stringify(response)]);
}

/**
 * Runs `work` as the operation's unit of work under the idempotency claim. A replay or a refusal committed no change:
 * the operation's trail is taken without an entry (as for the engine's refusals), so the pipeline knows it is done.
 */
export async function idempotentWrite<T extends Record<string, unknown>>(
  ctx: Pick<HandlerContext<Operation>, 'mutate' | 'auditTrail' | 'deps' | 'actor'>,
  claim: IdempotencyClaim | undefined,
  work: (unit: UnitOfWork) => Promise<T>,
): Promise<T | Record<string, unknown>> {
  const workspaceId = ctx.actor.workspaceId;
  try {
    return await ctx.mutate(async (unit) => {
      if (claim) {
        const replay = await claimKey(unit.tx, workspaceId, claim);
        if (replay !== undefined) throw new Replay(replay);
      }
      const outcome = await work(unit);
      if (claim) await storeResponse(unit.tx, workspaceId, claim.key, outcome);
      return outcome;
    });
  } catch (error) {
    if (error instanceof Replay) {
      ctx.auditTrail();
      return { ...error.response, idempotent: true };
    }
    if (!(error instanceof Refusal)) throw error;
    ctx.auditTrail();
    if (!claim) return error.outcome;
    const replay = await withTransaction(ctx.deps.db, async (tx) => {
      const earlier = await claimKey(tx, workspaceId, claim);
      if (earlier === undefined) await storeResponse(tx, workspaceId, claim.key, error.outcome);
      return earlier;
    });
    return replay === undefined ? error.outcome : { ...replay, idempotent: true };
  }
}

const memberNotFound = () => problem('not_found', 'no such loyalty member');
const RESOURCE = 'loyalty_member';

/** ADJUSTMENT: adds a bucket, or spends FIFO by expiry under the card's lock and the SQL guard. */
export async function adjustMemberPoints({ tx, record, emit }: UnitOfWork, workspaceId: string, memberId: string, body: PointsBody): Promise<PointsOutcome> {
  const [card] = await lockCards(tx, workspaceId, [memberId]);
  if (!card) throw memberNotFound();
  if (!card.active) refuse('loyalty_member_inactive', 'the member’s card is disabled');
  let entryId: string;
  let balance: number;
  if (body.points > 0) {
    const now = new Date();
    const activatesAt = body.activatesAt ? new Date(body.activatesAt) : null;
    const settings = (await findProgramSettings(tx, workspaceId, card.campaignId)) ?? {};
    const expiresAt = body.expiresAt ? new Date(body.expiresAt) : expiryOf(settings as Parameters<typeof expiryOf>[0], activatesAt ?? now);
    if (expiresAt && expiresAt.getTime() <= (activatesAt ?? now).getTime()) throw invalidField('body.expiresAt', 'expiresAt must be after activatesAt and now');
    try {
      const granted = await grantPoints(tx, workspaceId, memberId, { points: body.points, type: 'ADJUSTMENT', activatesAt, expiresAt, source: { type: 'api' }, reason: body.reason });
      entryId = granted.entryId;
      balance = granted.balanceAfter;
    } catch (error) {
      if (isPointsOutOfRange(error)) throw invalidField('body.points', 'the balance would pass 2^53-1');
      throw error;
    }
  } else {
    const debit = await debitPoints(tx, workspaceId, memberId, { points: -body.points, type: 'ADJUSTMENT', source: { type: 'api' }, reason: body.reason ?? null });
    if (!debit) refuse('loyalty_points_insufficient', `the balance is ${card.balance} points`);
    entryId = debit.entryId;
    balance = debit.balanceAfter;
  }
  emit('loyalty.points.adjusted', { memberId, points: body.points, entryId, balance, ...(body.reason ? { reason: body.reason } : {}) });
  const [entry] = await findEntries(tx, workspaceId, [entryId]);
  record({ resourceType: RESOURCE, resourceId: memberId, after: { entry } });
  return { ok: true, entry: entry!, member: (await findMember(tx, workspaceId, memberId))! };
}

/** Moves active points between two members of one program; the points keep their expiry instants. */
export async function transferMemberPoints({ tx, record, emit }: UnitOfWork, workspaceId: string, memberId: string, body: TransferBody): Promise<TransferOutcome> {
  if (body.toMemberId.toLowerCase() === memberId.toLowerCase()) throw invalidField('body.toMemberId', 'a member cannot transfer to itself');
  const cards = await lockCards(tx, workspaceId, [memberId, body.toMemberId]);
  const from = cards.find((c) => c.id === memberId.toLowerCase());
  const to = cards.find((c) => c.id === body.toMemberId.toLowerCase());
  if (!from) throw memberNotFound();
  if (!to) throw invalidField('body.toMemberId', 'no such loyalty member');
  if (from.campaignId !== to.campaignId) throw invalidField('body.toMemberId', 'points move only between members of one program');
  if (!from.active || !to.active) refuse('loyalty_member_inactive', 'a card of the transfer is disabled');
  const debit = await debitPoints(tx, workspaceId, from.id, { points: body.points, type: 'TRANSFER_OUT', source: { type: 'transfer', id: to.id }, reason: body.reason ?? null });
  if (!debit) refuse('loyalty_points_insufficient', `the balance is ${from.balance} points`);
  const ids = [debit.entryId];
  try {
    for (const part of await findDrawnExpiries(tx, workspaceId, debit.entryId)) {
      const granted = await grantPoints(tx, workspaceId, to.id, { points: part.points, type: 'TRANSFER_IN', expiresAt: part.expiresAt, source: { type: 'transfer', id: from.id }, reason: body.reason });
      ids.push(granted.entryId);
    }
  } catch (error) {
    if (isPointsOutOfRange(error)) throw invalidField('body.points', 'the receiving balance would pass 2^53-1');
    throw error;
  }
  emit('loyalty.points.transferred', { memberId: from.id, toMemberId: to.id, points: body.points, entryId: debit.entryId, balance: debit.balanceAfter });
  const entries = await findEntries(tx, workspaceId, ids);
  record({ resourceType: RESOURCE, resourceId: from.id, after: { toMemberId: to.id, points: body.points, entryIds: ids } });
  return { ok: true, entries, member: (await findMember(tx, workspaceId, from.id))! };
}
