// Unit tests of the signed keyset cursor codec: no database, no fixtures.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCursorCodec, InvalidCursorError, type CursorPosition } from '../../src/platform/cursor.js';

const position: CursorPosition = { list: 'customers.list', direction: 'next', createdAtMicros: 1_795_000_000_123_456, id: randomUUID() };

describe('cursor codec', () => {
  it('round-trips a position in both directions', () => {
    const codec = createCursorCodec(randomBytes(32));
    expect(codec.decode(codec.encode(position), 'customers.list')).toEqual(position);
    const prev = { ...position, direction: 'prev' as const };
    expect(codec.decode(codec.encode(prev), 'customers.list')).toEqual(prev);
  });

  it('issues opaque URL-safe strings', () => {
    const cursor = createCursorCodec(randomBytes(32)).encode(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain(position.id);
  });

  it('refuses a cursor with any single character changed', () => {
    const codec = createCursorCodec(randomBytes(32));
    const cursor = codec.encode(position);
    for (let i = 0; i < cursor.length; i++) {
      const replacement = cursor[i] === 'A' ? 'B' : 'A';
      const tampered = cursor.slice(0, i) + replacement + cursor.slice(i + 1);
      expect(() => codec.decode(tampered, 'customers.list'), `position ${i}`).toThrow(InvalidCursorError);
    }
  });

  it('refuses a forged payload, truncation, padding and garbage', () => {
    const codec = createCursorCodec(randomBytes(32));
    const cursor = codec.encode(position);
    const raw = Buffer.from(cursor, 'base64url');
    const forgedPayload = Buffer.from(JSON.stringify(['customers.list', 'n', 0, position.id]));
    const forged = Buffer.concat([raw.subarray(0, 16), forgedPayload]).toString('base64url');
    for (const bad of [forged, cursor.slice(0, -1), cursor.slice(0, 20), cursor + '=', ' ' + cursor, '', 'abc', '!!!!', randomBytes(64).toString('base64url')]) {
      expect(() => codec.decode(bad, 'customers.list'), bad).toThrow(InvalidCursorError);
    }
  });

  it('refuses a cursor signed with another key', () => {
    const cursor = createCursorCodec(randomBytes(32)).encode(position);
    expect(() => createCursorCodec(randomBytes(32)).decode(cursor, 'customers.list')).toThrow(InvalidCursorError);
  });

  it('refuses a cursor issued for another list', () => {
    const codec = createCursorCodec(randomBytes(32));
    const cursor = codec.encode({ ...position, list: 'apiKeys.list' });
    expect(() => codec.decode(cursor, 'customers.list')).toThrow(/another list/);
  });
});
