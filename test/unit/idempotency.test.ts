// The idempotency facility's pure half: the claim an input makes, its fingerprint, and how a stored reply answers.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimOf, fingerprintOf, replayOf } from '../../src/contract/idempotency.js';
import { defineOperation } from '../../src/contract/operation.js';
import { ProblemError } from '../../src/contract/problems.js';
import { redemptionContract } from '../../src/domains/redemptions/redemption.contract.js';

const note = defineOperation({
  name: 'notes.add',
  method: 'post',
  path: '/boards/{board}/notes/{slot}',
  scope: 'campaigns:write',
  summary: 'test',
  tags: [],
  params: z.object({ board: z.string(), slot: z.string() }),
  body: z.object({ text: z.string(), meta: z.record(z.string(), z.unknown()).optional(), idempotencyKey: z.string().optional() }),
  output: z.object({}),
  idempotent: true,
});

describe('the idempotency claim', () => {
  it('is made only for an operation marked idempotent, and only with a key', () => {
    expect(claimOf(note, { board: 'b', slot: '1', text: 'x' })).toBeUndefined();
    expect(claimOf({ ...note, idempotent: false }, { board: 'b', slot: '1', text: 'x', idempotencyKey: 'k' })).toBeUndefined();
    expect(claimOf(note, { board: 'b', slot: '1', text: 'x', idempotencyKey: 'k' })?.key).toBe('k');
  });

  it('fingerprints the operation, the path parameters in declared order and the body without the key', () => {
    const claim = claimOf(note, { slot: '1', board: 'b', text: 'x', idempotencyKey: 'k' });
    expect(claim?.hash).toBe(fingerprintOf('notes.add', 'b/1', { text: 'x' }));
    expect(claimOf(note, { board: 'b', slot: '2', text: 'x', idempotencyKey: 'k' })?.hash).not.toBe(claim?.hash);
    expect(claimOf(note, { board: 'b', slot: '1', text: 'y', idempotencyKey: 'k' })?.hash).not.toBe(claim?.hash);
    expect(claimOf(note, { board: 'b', slot: '1', text: 'x', idempotencyKey: 'other' })?.hash).toBe(claim?.hash);
  });

  it('hashes two bodies that mean the same alike, at every level', () => {
    const a = claimOf(note, { board: 'b', slot: '1', text: 'x', meta: { p: 1, q: { r: [1, { s: 2, t: 3 }] } }, idempotencyKey: 'k' });
    const b = claimOf(note, { meta: { q: { r: [1, { t: 3, s: 2 }] }, p: 1 }, idempotencyKey: 'k', text: 'x', slot: '1', board: 'b' });
    expect(a?.hash).toBe(b?.hash);
  });

  it('keeps the fingerprint a redemption stored its key under before the facility (sha-256 of operation, code, body)', () => {
    const input = { code: 'SPRING', idempotencyKey: 'order-1', order: { currency: 'EUR', amount: 4000 }, amount: 5 };
    const before = createHash('sha256').update(JSON.stringify(['redemptions.redeem', 'SPRING', { amount: 5, order: { amount: 4000, currency: 'EUR' } }])).digest('hex');
    expect(claimOf(redemptionContract.redeemVoucher, input)).toEqual({ key: 'order-1', hash: before });
  });
});

describe('a stored reply', () => {
  it('answers the same request again, marked idempotent', () => {
    expect(replayOf({ hash: 'h', response: { ok: false, code: 'x' } }, 'h')).toEqual({ ok: false, code: 'x', idempotent: true });
  });

  it('answers another request under its key with 409 idempotency_conflict', () => {
    let thrown: unknown;
    try {
      replayOf({ hash: 'h', response: {} }, 'other');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProblemError);
    expect((thrown as ProblemError).code).toBe('idempotency_conflict');
  });
});

describe('the fingerprint, as keys stored earlier were hashed', () => {
  // How every stored key was fingerprinted before the fingerprint wrote its text directly: a copy with each object
  // rebuilt in sorted key order, given to JSON.stringify. A retry across an upgrade must hash the same.
  const sortedCopy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortedCopy);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((k) => [k, sortedCopy((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  const earlier = (operation: string, path: string, body: Record<string, unknown>) =>
    createHash('sha256').update(JSON.stringify([operation, path, sortedCopy(body)])).digest('hex');

  it('is the same for any JSON body: nested objects, arrays, numeric and odd keys, unicode, undefined members', () => {
    const key = fc.oneof(fc.string(), fc.constantFrom('0', '1', '2', '10', '007', '4294967294', '4294967295', '-1', '1.5', '__proto__', 'toJSON', 'a"b', '\u2028'));
    const body = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double(),
        fc.integer(),
        fc.string({ unit: 'binary' }),
        fc.constant(undefined),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 6 }),
      ),
      object: fc.dictionary(key, tie('value'), { maxKeys: 8 }),
    })).object as fc.Arbitrary<Record<string, unknown>>;
    fc.assert(
      fc.property(fc.string(), fc.string(), body, (operation, path, b) => {
        expect(fingerprintOf(operation, path, b)).toBe(earlier(operation, path, b));
      }),
      { numRuns: 2_000 },
    );
  });

  it('orders array-index keys numerically, as an object built in sorted order lists them', () => {
    const body = { '10': 'a', '2': 'b', b: 1, a: 2, '4294967295': 'not an index', '01': 'not one either' };
    expect(fingerprintOf('x', '', body)).toBe(earlier('x', '', body));
    expect(fingerprintOf('x', '', body)).toBe(fingerprintOf('x', '', { a: 2, b: 1, '01': 'not one either', '4294967295': 'not an index', '2': 'b', '10': 'a' }));
  });
});
