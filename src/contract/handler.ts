// The handler side of an operation: what a handler receives, and implement() to bind handlers to a contract.
import type { EventType } from './event.schemas.js';
import type { CursorCodec } from '../platform/cursor.js';
import type { Pool, Sql } from '../platform/database.js';
import type { KeyedQueue } from '../platform/keyed-queue.js';
import type { Slots } from '../platform/slots.js';
import type { Logger } from '../platform/logger.js';
import type { Actor, RequestMeta } from './actor.js';
import type { ExplanationCode, Order } from './checkout.schemas.js';
import type { CustomerReference } from './common.schemas.js';
import type { CustomerUse, DeferredCustomer, RedemptionEngine } from './engine-port.js';
import type { IdempotencyClaim } from './idempotency.js';
import type { Operation, OperationInput, OperationOutput } from './operation.js';
import type { ServiceSettings } from './service-settings.js';
import type { VoucherSnapshot } from './voucher-snapshot.schemas.js';
import type { ZoneCalendar } from './zone-calendar.js';

export type { Actor, RequestMeta } from './actor.js';

/** Everything a handler may reach. Later parts (engine, jobs) extend it. */
export interface ServiceDeps {
  db: Pool;
  cursors: CursorCodec;
  log: Logger;
  engine: RedemptionEngine;
  /** A revoked API key stops working in this process before the revocation answers. */
  forgetApiKeys(): void;
  /** The insights' short answer cache, one per service (two services in one test keep theirs apart). */
  insightCache: AnswerCache;
  /** The customers checkouts name, read and created together per event-loop turn; one per service. */
  customers: CheckoutCustomers;
  /** What handlers read of the configuration, built at the composition root (src/composition.ts). */
  settings: ServiceSettings;
  /** Each workspace's stack limit, read again at most every few seconds; one per service. */
  stackLimits: StackLimits;
  /** Each workspace's automatic tiers indexed for carts, rebuilt when its promotions version moves; one per service. */
  tierIndexes: TierIndexes;
  /** Instants read in time zones (schedules, budget periods), with their memos; in a web process, the engine's web thread shares it. */
  calendar: ZoneCalendar;
  /**
   * Writes that take one hot row's lock (an order's returns and cancels, a loyalty card's points, a reward's
   * redemptions), run in turn in this process, keyed `<resource>:<id>`: a request waiting for its turn holds no
   * database connection, so racing writes to one hot row cannot take the whole pool from everyone else. One per service.
   */
  rowTurns: KeyedQueue;
  /**
   * The bulk imports this process stages and merges at once, each holding a database session for its whole run (a
   * voucher import a second one while it merges) and taking another for moments: a quarter of the pool, so that a
   * burst of imports leaves the rest to other requests.
   */
  importSlots: Slots;
}

export interface StackLimits {
  of(workspaceId: string): Promise<number>;
}

/** A workspace's automatic tiers at one promotions version, indexed so that a cart meets only its candidates. */
export interface TierIndex {
  readonly size: number;
  candidates(order: Order): VoucherSnapshot[];
}

export interface TierIndexes {
  /** The index at this version: built once however many requests ask, kept until the version moves. */
  at(workspaceId: string, version: string): Promise<TierIndex>;
}

/**
 * The customer a checkout names, as the engine takes it. By id: it must exist (else undefined: `customer_not_found`).
 * By sourceId or email: found, else a customer without uses (no customer at all when the request names none).
 */
export interface CheckoutCustomers {
  /** For a preview (validate): never creates. */
  preview(workspaceId: string, ref: CustomerReference | undefined): Promise<CustomerUse | undefined>;
  /** For a redemption: an unknown sourceId is created now, with its customer.created event and AUTO segments. */
  redeeming(workspaceId: string, ref: CustomerReference | undefined): Promise<CustomerUse | undefined>;
  /**
   * For a single voucher's redemption (engine.redeem): one named by sourceId alone is left to the batch that decides it
   * (a DeferredCustomer, no statement now); any other as `redeeming` answers it.
   */
  redeemingOne(workspaceId: string, ref: CustomerReference | undefined): Promise<CustomerUse | DeferredCustomer | undefined>;
}

/** Answers kept a short while per workspace, question and input; concurrent misses share one computation. */
export interface AnswerCache {
  get<T>(workspaceId: string, question: string, input: unknown, compute: () => Promise<T>): Promise<T>;
}

/** The change a mutation made, as its audit entry shows it. Secrets are stripped before it is written. */
export interface RecordedChange {
  resourceType: string;
  resourceId?: string | null | undefined;
  before?: unknown;
  after?: unknown;
}

/** The transaction of one mutation: write through `tx`, say what changed with `record` (exactly once). */
export interface UnitOfWork {
  tx: Sql;
  record(change: RecordedChange): void;
  /** An outbox event, inserted in this transaction. */
  emit(type: EventType, payload: Record<string, unknown>): void;
}

/**
 * The audit entry of a write the engine commits (a rollback, a balance adjustment): it travels with the partition
 * message and is written in the batch that commits the change. Plain data, it crosses the thread boundary.
 */
export interface AuditTrail {
  workspaceId: string;
  operation: string;
  actor: { type: Actor['type']; id: string; label: string };
  requestId: string;
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export interface HandlerContext<Op extends Operation> {
  input: OperationInput<Op>;
  actor: Actor;
  deps: ServiceDeps;
  log: Logger;
  request: RequestMeta;
  /**
   * The request's claim on its idempotency key, for an operation the contract marks idempotent (else undefined).
   * The pipeline claims it in mutate()'s transaction; a write the engine commits hands it to the engine instead.
   */
  idempotency: IdempotencyClaim | undefined;
  /**
   * Opens the one transaction of a mutation; its audit entry and events commit with it, or nothing does.
   * A `write` operation that commits without recording a change is a bug: the pipeline refuses it.
   */
  mutate<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T>;
  /** For a write committed by the engine: hand this to it; its batch writes the entry. */
  auditTrail(): AuditTrail;
}

/** A business refusal of a write, answered as an outcome: nothing commits, no audit entry is written. */
export interface RefusedOutcome {
  ok: false;
  code: ExplanationCode;
  message: string;
  explanations?: Array<Record<string, unknown>>;
}

/**
 * Thrown by a write's unit of work (through refuse()): its transaction rolls back and the pipeline answers the
 * outcome; under an idempotency key the outcome is stored on its own, so that a replay answers it again.
 */
export class Refused {
  constructor(readonly outcome: RefusedOutcome) {}
}

export function refuse(code: ExplanationCode, message: string, details?: Record<string, unknown>): never {
  throw new Refused({ ok: false, code, message, ...(details ? { explanations: [{ code, message, ...details }] } : {}) });
}

/** What a create found instead of creating it: answered with the operation's `existingStatus`, nothing changed. */
export class Existing<T> {
  constructor(readonly value: T) {}
}

export function existing<T>(value: T): Existing<T> {
  return new Existing(value);
}

export type Handler<Op extends Operation> = (ctx: HandlerContext<Op>) => Promise<OperationOutput<Op> | Existing<OperationOutput<Op>>>;

type ContractMap = Record<string, Operation>;

export type HandlersOf<C extends ContractMap> = { [K in keyof C]: Handler<C[K]> };

export interface BoundHandler {
  operation: Operation;
  handle: (ctx: HandlerContext<Operation>) => Promise<unknown>;
}

/** Binds one handler to each operation of a domain contract; TypeScript fails when one is missing. */
export function implement<C extends ContractMap>(contract: C, handlers: HandlersOf<C>): BoundHandler[] {
  return Object.keys(contract).map((key) => ({
    operation: contract[key]!,
    handle: handlers[key] as unknown as BoundHandler['handle'],
  }));
}
