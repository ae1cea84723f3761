// Opaque keyset cursors: (list, direction, createdAt, id), HMAC-signed so a cursor the server did not issue is refused.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type CursorDirection = 'next' | 'prev';

export interface CursorPosition {
  list: string;
  direction: CursorDirection;
  /** created_at in microseconds since the epoch (PostgreSQL precision). */
  createdAtMicros: number;
  id: string;
}

export class InvalidCursorError extends Error {}

const SIGNATURE_BYTES = 16;

export interface CursorCodec {
  encode(position: CursorPosition): string;
  decode(cursor: string, list: string): CursorPosition;
}

export function createCursorCodec(key: Buffer): CursorCodec {
  const sign = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, SIGNATURE_BYTES);
  return {
    encode(position) {
      const payload = Buffer.from(
        JSON.stringify([position.list, position.direction === 'next' ? 'n' : 'p', position.createdAtMicros, position.id]),
      );
      return Buffer.concat([sign(payload), payload]).toString('base64url');
    },
    decode(cursor, list) {
      const raw = Buffer.from(cursor, 'base64url');
      if (raw.length <= SIGNATURE_BYTES || raw.toString('base64url') !== cursor) throw new InvalidCursorError('malformed cursor');
      const signature = raw.subarray(0, SIGNATURE_BYTES);
      const payload = raw.subarray(SIGNATURE_BYTES);
      if (!timingSafeEqual(signature, sign(payload))) throw new InvalidCursorError('cursor was not issued by this service');
      const [cursorList, direction, createdAtMicros, id] = JSON.parse(payload.toString('utf8')) as [string, string, number, string];
      if (cursorList !== list) throw new InvalidCursorError('cursor belongs to another list');
      return { list, direction: direction === 'n' ? 'next' : 'prev', createdAtMicros, id };
    },
  };
}
