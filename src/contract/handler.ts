// The handler side of an operation: what a handler receives, and implement() to bind handlers to a contract.
import type { CursorCodec } from '../platform/cursor.js';
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import type { RedemptionEngine } from './engine-port.js';
import type { Operation, OperationInput, OperationOutput } from './operation.js';

export interface AuthContext {
  workspaceId: string;
  keyId: string;
  scopes: readonly string[];
}

/** Everything a handler may reach. Later parts (engine, jobs) extend it. */
export interface ServiceDeps {
  db: Pool;
  cursors: CursorCodec;
  log: Logger;
  engine: RedemptionEngine;
}

export interface HandlerContext<Op extends Operation> {
  input: OperationInput<Op>;
  auth: AuthContext;
  deps: ServiceDeps;
  log: Logger;
}

export type Handler<Op extends Operation> = (ctx: HandlerContext<Op>) => Promise<OperationOutput<Op>>;

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
