// Stack redemption across partitions: snapshot the vouchers, apply the stack rules, hold one use of each (holds never
// block, so the partitions are asked at once and none ever waits on another), write the whole stack in one statement
// (voucher rows locked in id order: deadlock-free; concurrent stacks are group-committed), then confirm or release.
// Atomic: every voucher is redeemed, or none is and nothing is recorded but the idempotency key's refusal. An entry's
// validation session counts its own reservation as available and is consumed by the stack's commit.
import { uuidv7 } from '../../platform/ids.js';
import type { RedemptionEngine } from '../../contract/engine-port.js';
import { ProblemError } from '../../contract/problems.js';
import { balanceTaken, orderTotals, refusalFields } from '../../checkout/redemption.rules.js';
import { evaluateStack, type StackEntry } from '../../checkout/stack.rules.js';
import type { StackOutcome } from '../../contract/checkout.schemas.js';
import type { Pool } from '../../platform/database.js';
import type { Fence, HoldItem } from '../messages.js';
import type { PartitionRouter } from '../partition-router.js';
import { PlanCommitter, type PlanResult, type RollupWriter } from '../partition/group-commit.js';
import { emptyPlan, planRedemption, planSession, planStackEvent } from '../partition/write-plan.js';
import type { RefusalCounts } from '../partition/refusal-counts.js';
import { replayOf } from '../../contract/idempotency.js';
import { findStoredReplies, type StoredKey } from '../../platform/idempotency-keys.sql.js';
import { resolveVouchers, stackEntries, type ResolvedVoucher } from './stack-entries.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';

type StackRequest = Parameters<RedemptionEngine['redeemStack']>[0];
/** A stack whose tier entries name their tier's internal code. */
type ResolvedStack = Omit<StackRequest, 'vouchers'> & { vouchers: ResolvedVoucher[] };

const ATTEMPTS = 8;

/**
 * Stacks racing for the same limited vouchers may each hold some and miss others, release, and meet again: a random
 * pause growing with the attempt (up to ~2, 4, … 128 ms) spreads them so that the held ones commit.
 */
const backOff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** (attempt + 1)));

/**
 * A stack's hold in one slot. Holds are asked per slot, and one thread serves several slots: under one id for all,
 * a thread holding two of the stack's slots would keep only the second hold and never release the first.
 */
const slotHold = (holdId: string, slot: number) => `${holdId}/${slot}`;

export class StackRedemption {
  /** Stacks in flight in this process by `workspace key`: a concurrent duplicate waits, then replays. */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly committer: PlanCommitter;

  constructor(
    private readonly db: Pool,
    private readonly router: PartitionRouter,
    private readonly calendar: ZoneCalendar,
    private readonly insights: { rollup: RollupWriter; refusals: RefusalCounts },
    private readonly now: () => number = Date.now,
  ) {
    this.committer = new PlanCommitter(db, insights.rollup);
  }

  async redeem(request: StackRequest): Promise<StackOutcome> {
    const id = `${request.workspaceId} ${request.idempotency.key}`;
    for (;;) {
      const running = this.inFlight.get(id);
      if (!running) break;
      await running.catch(() => undefined);
    }
    const work = this.redeemOnce(request);
    this.inFlight.set(id, work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(id);
    }
  }

  private async replayed(request: Pick<StackRequest, 'workspaceId' | 'idempotency'>): Promise<StackOutcome | undefined> {
    const [stored] = await findStoredReplies(this.db, [{ workspaceId: request.workspaceId, key: request.idempotency.key }]);
    if (!stored) return undefined;
    return replayOf({ hash: stored.requestHash, response: stored.response }, request.idempotency.hash) as StackOutcome;
  }

  /**
   * No lookup of the key first: a repeated request is evaluated again, and its commit finds the key taken and answers
   * the stored outcome instead. That saves a query on every stack; replays cost one evaluation.
   */
  private async redeemOnce(original: StackRequest): Promise<StackOutcome> {
    // A tier entry is its voucher row's internal code; the snapshot must then be a tier (and a code entry a code).
    const request: ResolvedStack = { ...original, vouchers: resolveVouchers(original.vouchers) };
    const together = await this.redeemInOneThread(request);
    if (together) return together;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const entries = await this.snapshots(request);
      const evaluation = evaluateStack(entries, request.order, request.stackLimit, this.now(), this.calendar);
      if (!evaluation.ok) {
        const failure = evaluation.failure!;
        const outcome: StackOutcome = { ok: false, ...refusalFields(failure), results: evaluation.results };
        const written = await this.commit(request, outcome, emptyPlan());
        if (written === 'taken') return (await this.replayed(request))!;
        // Counted once per request: a replay (the key taken) answered above is not a second refusal.
        const failed = entries[evaluation.results.findIndex((r) => !r.ok && r.code !== 'skipped')]?.voucher;
        this.insights.refusals.add(request.workspaceId, failed?.campaignId ?? null, failure.code, 'stack', this.now());
        return outcome;
      }
      const stackId = uuidv7();
      const holdId = uuidv7();
      const holdItems = new Map<number, HoldItem[]>();
      for (const member of evaluation.members) {
        const p = this.router.route(request.workspaceId, member.voucher.code);
        holdItems.set(p, [
          ...(holdItems.get(p) ?? []),
          {
            code: member.voucher.code,
            voucherId: member.voucher.id,
            configVersion: member.voucher.configVersion,
            campaignVersion: member.voucher.campaign?.version ?? null,
            balance: balanceTaken(member.grant),
            session: request.vouchers[member.index]!.session?.key,
          },
        ]);
      }
      // Holds never wait (a partition answers at once, yes or no), so asking every partition at once cannot deadlock.
      const partitionsToHold = [...holdItems.keys()].sort((x, y) => x - y);
      const answers = await Promise.all(
        partitionsToHold.map((p) =>
          this.router.call<{ ok: boolean; fence?: Fence }>(p, { type: 'hold', workspaceId: request.workspaceId, holdId: slotHold(holdId, p), items: holdItems.get(p)!, customer: request.customer }),
        ),
      );
      const held = partitionsToHold.filter((_, i) => answers[i]!.ok);
      const allHeld = held.length === partitionsToHold.length;
      if (!allHeld) {
        await this.release(request.workspaceId, holdId, held, false);
        await backOff(attempt);
        continue;
      }

      const createdAt = new Date(this.now());
      const plan = emptyPlan();
      // Each hold was granted under its owner's lease: the commit is refused should any of them have moved since.
      for (const answer of answers) if (answer.fence) plan.fences.add(`${answer.fence[0]}:${answer.fence[1]}`);
      const results = [...evaluation.results];
      for (const member of evaluation.members) {
        const redemptionId = planRedemption(plan, this.calendar, {
          voucher: member.voucher,
          kind: member.grant.kind,
          amount: member.grant.amount,
          points: member.grant.kind === 'POINTS' ? member.grant.points : undefined,
          itemDiscounts: member.grant.kind === 'DISCOUNT' ? member.grant.itemDiscounts : undefined,
          customerId: request.customer.id,
          order: request.order,
          metadata: request.metadata,
          stackId,
          createdAt,
        });
        results[member.index] = { ...results[member.index]!, redemptionId };
        const session = request.vouchers[member.index]!.session;
        if (session) planSession(plan, member.voucher, session.key, null);
      }
      planStackEvent(plan, request.workspaceId, stackId, results);
      const outcome: StackOutcome = { ok: true, stackId, results, order: orderTotals(request.order, evaluation.state) };
      let written: Awaited<ReturnType<StackRedemption['commit']>>;
      try {
        written = await this.commit(request, outcome, plan);
      } catch (error) {
        await this.release(request.workspaceId, holdId, held, false);
        throw error;
      }
      if (written === 'ok') {
        // Not awaited: the release is queued to each thread (or link) before the answer leaves, and a thread takes its
        // messages in order, so any later call about these vouchers finds the hold already turned into a use.
        void this.release(request.workspaceId, holdId, held, true);
        return outcome;
      }
      await this.release(request.workspaceId, holdId, held, false);
      if (written === 'taken') return (await this.replayed(request))!;
      // A guard did not hold (a change made elsewhere): the partitions read those vouchers again, and we retry.
      for (const code of request.vouchers.map((v) => v.code)) {
        await this.router.call(this.router.route(request.workspaceId, code), { type: 'forget', workspaceId: request.workspaceId, code });
      }
      await backOff(attempt);
    }
    throw new ProblemError('service_unavailable', 'the vouchers of this stack kept changing; retry', { headers: { 'Retry-After': '1' } });
  }

  /**
   * A stack whose vouchers one partition thread owns (of this process: always so when one thread serves all its
   * slots, PARTITIONS=1; or of the one other member holding them all): decided and committed there in a batch like a
   * redemption, with no snapshots, holds nor transaction of its own. Undefined, nothing written, otherwise.
   */
  private redeemInOneThread(request: ResolvedStack): Promise<StackOutcome | undefined> {
    const { workspaceId, vouchers, order, customer, idempotency, metadata, stackLimit } = request;
    const slots = vouchers.map((v) => this.router.route(workspaceId, v.code));
    return this.router.callOneThread<StackOutcome>(slots, { type: 'stack', workspaceId, vouchers, order, customer, idempotency, metadata, stackLimit });
  }

  private snapshots(request: ResolvedStack): Promise<StackEntry[]> {
    return stackEntries(this.router, request.workspaceId, request.vouchers, request.customer);
  }

  private async commit(request: Pick<StackRequest, 'workspaceId' | 'idempotency'>, outcome: StackOutcome, plan: ReturnType<typeof emptyPlan>): Promise<PlanResult> {
    const key: StoredKey = { workspaceId: request.workspaceId, key: request.idempotency.key, requestHash: request.idempotency.hash, response: outcome };
    plan.keys.push(key);
    return this.committer.submit(plan);
  }

  /** A hold on a member that has gone went with it: a release that finds no one is no failure of the stack. */
  private async release(workspaceId: string, holdId: string, partitions: number[], applied: boolean): Promise<void> {
    await Promise.all(partitions.map((p) => this.router.call(p, { type: 'release', workspaceId, holdId: slotHold(holdId, p), applied }).catch(() => undefined)));
  }
}
