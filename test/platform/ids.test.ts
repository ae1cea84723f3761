import { describe, expect, it } from 'vitest';
import { createUuidv7 } from '../../src/platform/ids.js';

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID carrying the time', () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const id = createUuidv7()(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('increases within one millisecond and across many calls, without repeats', () => {
    const next = createUuidv7();
    const ids = Array.from({ length: 20_000 }, () => next(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps increasing when the clock steps back', () => {
    const next = createUuidv7();
    const later = next(1_800_000_000_000);
    const earlier = next(1_700_000_000_000);
    expect(earlier > later).toBe(true);
  });
});
