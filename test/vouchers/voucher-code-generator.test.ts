import { describe, expect, it } from 'vitest';
import {
  CHARSET_PRESETS,
  codeSpaceSize,
  codeSpecProblem,
  DEFAULT_CHARSET,
  generateCode,
  drawCodes,
  resolveCodeSpec,
  timeOrderedIds,
} from '../../src/domains/vouchers/voucher-code-generator.js';

describe('voucher code generator', () => {
  it('draws 8 characters without look-alikes by default', () => {
    const spec = resolveCodeSpec();
    expect(spec).toEqual({ prefix: '', postfix: '', pattern: '########', charset: DEFAULT_CHARSET });
    for (const code of drawCodes(spec, 500)) expect(code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
  });

  it('wraps the random part in prefix and postfix and honours the length', () => {
    const spec = resolveCodeSpec({ prefix: 'XMAS-', postfix: '-26', length: 12, charset: 'numbers' });
    expect(generateCode(spec)).toMatch(/^XMAS-\d{12}-26$/);
  });

  it('replaces each # of a pattern and keeps its other characters, ignoring length', () => {
    const spec = resolveCodeSpec({ pattern: 'SUMMER-####-##.x', length: 3, charset: 'alphabetic_lowercase' });
    expect(generateCode(spec)).toMatch(/^SUMMER-[a-z]{4}-[a-z]{2}\.x$/);
    expect(codeSpaceSize(spec)).toBe(26 ** 6);
  });

  it('resolves charset presets by name and takes any other charset literally, without duplicates', () => {
    expect(resolveCodeSpec({ charset: 'alphanumeric' }).charset).toBe(CHARSET_PRESETS.alphanumeric);
    expect(resolveCodeSpec({ charset: 'alphabetic_uppercase' }).charset).toBe('ABCDEFGHIJKLMNOPQRSTUVWXYZ');
    expect(resolveCodeSpec({ charset: 'AABBC' }).charset).toBe('ABC');
    const codes = drawCodes(resolveCodeSpec({ charset: 'xy_', length: 6 }), 200);
    for (const code of codes) expect(code).toMatch(/^[xy_]{6}$/);
  });

  it('uses every charset character over many draws', () => {
    const spec = resolveCodeSpec({ charset: 'numbers', length: 1 });
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) seen.add(generateCode(spec));
    expect([...seen].sort().join('')).toBe('0123456789');
  });

  it('draws each character equally often, also for a charset size that does not divide 256', () => {
    // 32 (the default) divides 256; 10 and 62 do not: a plain byte % size would favour the first characters
    for (const charset of ['numbers', 'alphanumeric']) {
      const spec = resolveCodeSpec({ charset, length: 20 });
      const counts = new Map<string, number>();
      for (const code of drawCodes(spec, 10_000)) for (const ch of code) counts.set(ch, (counts.get(ch) ?? 0) + 1);
      const expected = 200_000 / spec.charset.length;
      expect(counts.size).toBe(spec.charset.length);
      for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.1);
      // the first characters are not favoured: those below 256 % size get no more than the others on average
      const low = [...spec.charset.slice(0, 256 % spec.charset.length)].map((ch) => counts.get(ch)!);
      expect(low.reduce((a, b) => a + b, 0) / low.length / expected).toBeLessThan(1.03);
    }
  });

  it('draws 100,000 distinct codes quickly (bytes drawn in bulk)', () => {
    const started = performance.now();
    const codes = drawCodes(resolveCodeSpec(), 100_000);
    expect(new Set(codes).size).toBe(100_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('gives a bulk insert increasing version 7 UUIDs that carry the time, distinct across runs', () => {
    const now = Date.parse('2026-11-24T10:00:00.000Z');
    const ids = timeOrderedIds(100_000, now);
    for (const id of [ids[0]!, ids[99_999]!]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(ids[0]!.replaceAll('-', '').slice(0, 12), 16)).toBe(now);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    const other = timeOrderedIds(100_000, now);
    expect(new Set([...ids, ...other]).size).toBe(200_000);
    expect(timeOrderedIds(1, now + 1)[0]! > ids[99_999]!).toBe(true);
  });

  it('draws distinct codes and skips excluded ones', () => {
    const spec = resolveCodeSpec({ charset: 'numbers', length: 2 });
    const exclude = new Set(Array.from({ length: 50 }, (_, i) => String(i).padStart(2, '0')));
    const codes = drawCodes(spec, 20, exclude);
    expect(new Set(codes).size).toBe(20);
    expect(codes.every((code) => Number(code) >= 50)).toBe(true);
  });

  it('returns fewer codes instead of looping when the space is exhausted', () => {
    const spec = resolveCodeSpec({ charset: 'AB', length: 1 });
    expect(drawCodes(spec, 3).sort()).toEqual(['A', 'B']);
    expect(drawCodes(spec, 1, new Set(['A', 'B']))).toEqual([]);
  });

  it('refuses a code space smaller than twice the count, and codes longer than 100 characters', () => {
    const small = resolveCodeSpec({ charset: 'numbers', length: 2 });
    expect(codeSpecProblem(small, 50)).toBeUndefined();
    expect(codeSpecProblem(small, 51)).toMatch(/code space holds 100 codes/);
    expect(codeSpecProblem(resolveCodeSpec({ prefix: 'P'.repeat(50), postfix: 'Q'.repeat(50), length: 1 }), 1)).toMatch(/limit is 100/);
    expect(codeSpecProblem(resolveCodeSpec({ length: 64 }), 100_000)).toBeUndefined();
  });
});
