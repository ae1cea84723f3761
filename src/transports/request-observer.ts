// What the faces report of each request for /metrics: its operation (a registry name, another face's fixed name such
// as rpc.batch, or `none`), its status and duration, and the business refusals answered. telemetry/ implements it.

export interface RequestObserver {
  answered(operation: string, status: number, seconds: number): void;
  refused(operation: string, code: string): void;
}

export const NO_OBSERVER: RequestObserver = Object.freeze({ answered() {}, refused() {} });

/** A request that reached no operation (unknown route, refused before its route was matched, health, dashboard). */
export const NO_OPERATION = 'none';

interface Locals {
  locals: Record<string, unknown>;
}

/** Names the operation an express response answers, for the timing middleware that observes it when it closes. */
export function markOperation(res: Locals, name: string): void {
  res.locals.operation = name;
}

export function markedOperation(res: Locals): string {
  const name = res.locals.operation;
  return typeof name === 'string' ? name : NO_OPERATION;
}

/** The code of a refusal outcome (`ok: false` or `valid: false`); undefined otherwise, and for a replayed answer. */
export function refusalCodeOf(output: unknown): string | undefined {
  if (typeof output !== 'object' || output === null) return undefined;
  const o = output as { ok?: unknown; valid?: unknown; code?: unknown; idempotent?: unknown };
  return (o.ok === false || o.valid === false) && typeof o.code === 'string' && o.idempotent !== true ? o.code : undefined;
}
