import { describe, expect, it } from 'vitest';
import {
  CHARSET_PRESETS,
  codeSpaceSize,
  codeSpecProblem,
  DEFAULT_CHARSET,
  generateCode,
  drawCodes,
  resolveCodeSpec,
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
