// Rewards granted without points (a referral's rewards): the same issuing as a redemption, and the same stock, in the
// caller's transaction; taken back up to what is left when the grant is reverted.
import type { UnitOfWork } from '../../contract/handler.js';
import { ProblemError } from '../../contract/problems.js';
import { findReward, takeStock, type IssuedRecord } from './reward.queries.js';
import { issue, takeBack, type Touched } from './reward-redemption.service.js';

export type Grant = { status: 'GRANTED'; issued: IssuedRecord | null } | { status: 'FAILED'; detail: string };

/** Issues a reward to a customer; a reward gone, inactive, out of stock or unable to issue is FAILED (nothing changes). */
export async function grantReward(unit: Pick<UnitOfWork, 'tx' | 'emit'>, workspaceId: string, rewardId: string, customerId: string, grantId: string, touched: Touched): Promise<Grant> {
  const reward = await findReward(unit.tx, workspaceId, rewardId, { lock: true });
  if (!reward) return { status: 'FAILED', detail: 'no such reward' };
  if (!reward.active) return { status: 'FAILED', detail: 'the reward is not active' };
  await unit.tx.query('SAVEPOINT grant_reward');
  try {
    if (!(await takeStock(unit.tx, rewardId))) {
      await unit.tx.query('ROLLBACK TO SAVEPOINT grant_reward');
      return { status: 'FAILED', detail: 'the reward is out of stock' };
    }
    const issued = await issue(unit, workspaceId, reward, customerId, grantId, touched);
    await unit.tx.query('RELEASE SAVEPOINT grant_reward');
    return { status: 'GRANTED', issued };
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    await unit.tx.query('ROLLBACK TO SAVEPOINT grant_reward');
    return { status: 'FAILED', detail: error.message };
  }
}

/** Takes a grant back as far as it can: an unused voucher disabled, credits or points up to what is left. */
export function revokeGrant(unit: Pick<UnitOfWork, 'tx'>, workspaceId: string, issued: IssuedRecord | null, grantId: string, touched: Touched): Promise<boolean> {
  return takeBack(unit.tx, workspaceId, issued, grantId, 'up to the balance', touched);
}
