// Idempotency, its pure half: a request's claim on its key (the key and the request's fingerprint) and how a stored
// reply answers a later claim. Its SQL is platform/idempotency-keys.sql.ts; the pipeline and the engine use both.
import { hash } from 'node:crypto';
import type { Operation } from './operation.js';
import { ProblemError } from './problems.js';

/** A request's claim on `(workspace, key)`: `hash` names the request, so the same key with another body conflicts. */
export interface IdempotencyClaim {
  key: string;
  /** sha-256 of the operation, its path and its canonical body (fingerprintOf). */
  hash: string;
}

/** What a claimed key holds: the fingerprint of the request that claimed it and the reply it was answered. */
export interface StoredReply {
  hash: string;
  response: Record<string, unknown>;
}

/** An array index as JSON.stringify orders an object's own keys: these come first, in numeric order. */
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;
const isIndex = (key: string) => ARRAY_INDEX.test(key) && Number(key) < 4_294_967_295;

/**
 * The JSON text of `value` with every object's keys sorted, so two bodies that mean the same hash the same. Written
 * straight into one string (no sorted copy of each object): the text is exactly what JSON.stringify gave for a copy
 * whose objects were rebuilt in sorted key order, which is what keys stored before were hashed from. Such an object
 * lists its array-index keys first, in numeric order, then the others in sorted order.
 */
function canonicalJson(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i ? ',' : '') + (canonicalJson(value[i]) ?? 'null');
    return text + ']';
  }
  const sorted = Object.keys(value).sort();
  const indexes = sorted.filter(isIndex);
  const keys = indexes.length ? [...indexes.sort((a, b) => Number(a) - Number(b)), ...sorted.filter((k) => !isIndex(k))] : sorted;
  let text = '{';
  let first = true;
  for (const key of keys) {
    const member = canonicalJson((value as Record<string, unknown>)[key]);
    if (member === undefined) continue;
    text += (first ? '' : ',') + JSON.stringify(key) + ':' + member;
    first = false;
  }
  return text + '}';
}

/** The fingerprint of a request: its operation, its path (the path parameters) and its body without the key. */
export function fingerprintOf(operation: string, path: string, body: Record<string, unknown>): string {
  return hash('sha256', `[${JSON.stringify(operation)},${JSON.stringify(path)},${canonicalJson(body) ?? 'null'}]`, 'hex');
}

/**
 * The claim of a parsed input on its idempotency key, for an operation the contract marks idempotent; none without a
 * key. The path is the path parameters' values in declared order, joined by `/` (a voucher code, a member id; empty
 * without parameters); the body is every other field but `idempotencyKey` (the header arrives there too).
 */
export function claimOf(operation: Operation, input: Record<string, unknown>): IdempotencyClaim | undefined {
  // Most requests carry no key: they are answered before the input is copied.
  if (!operation.idempotent || typeof input.idempotencyKey !== 'string') return undefined;
  const { idempotencyKey: key, ...rest } = input as { idempotencyKey: string } & Record<string, unknown>;
  const pathNames = Object.keys(operation.params?.shape ?? {});
  const path = pathNames.map((name) => String(rest[name])).join('/');
  for (const name of pathNames) delete rest[name];
  return { key, hash: fingerprintOf(operation.name, path, rest) };
}

export function idempotencyConflict(): ProblemError {
  return new ProblemError('idempotency_conflict', 'this idempotency key was used with a different request');
}

/**
 * The answer to a claim (its fingerprint `hash`) on a key already used: the stored reply marked `idempotent: true`,
 * or 409 `idempotency_conflict` when the key was claimed by another request.
 */
export function replayOf(stored: StoredReply, hash: string): Record<string, unknown> {
  if (stored.hash !== hash) throw idempotencyConflict();
  return { ...stored.response, idempotent: true };
}
