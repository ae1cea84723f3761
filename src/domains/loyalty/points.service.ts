// Points operations of the API (adjustments, transfers; custom events are orchestration/'s), each one unit of work;
// the pipeline claims their idempotency key in it. A refusal (refuse()) changes nothing and writes no audit entry.
import { refuse, type UnitOfWork } from '../../contract/handler.js';
import { invalidField, problem } from '../../contract/problems.js';
import { requireCustomer } from '../customers/index.js';
import { expiryOf } from './earning.rules.js';
import { findMember } from './member.queries.js';
import type { PointsBody, PointsOutcome, TransferBody, TransferOutcome } from './member.schemas.js';
import { debitPoints, findDrawnExpiries, findEntries, grantPoints, isPointsOutOfRange, lockCards } from './points-ledger.queries.js';
import { findProgramSettings } from './reaction.queries.js';

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
