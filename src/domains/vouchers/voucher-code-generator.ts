// Random voucher codes from a code config (prefix + pattern of `#` + postfix over a charset). Pure, no I/O.
import { randomInt } from 'node:crypto';

export const CHARSET_PRESETS: Readonly<Record<string, string>> = Object.freeze({
  alphanumeric: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  alphabetic: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
  alphabetic_uppercase: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  alphabetic_lowercase: 'abcdefghijklmnopqrstuvwxyz',
  numbers: '0123456789',
});

/** Upper-case letters and digits without the look-alikes 0/O and 1/I. */
export const DEFAULT_CHARSET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const DEFAULT_CODE_LENGTH = 8;
export const MAX_CODE_LENGTH = 100;

export interface CodeConfigInput {
  prefix?: string | undefined;
  postfix?: string | undefined;
  length?: number | undefined;
  charset?: string | undefined;
  pattern?: string | undefined;
}

export interface CodeSpec {
  prefix: string;
  postfix: string;
  /** The random part: each `#` is one charset character, anything else is kept. */
  pattern: string;
  charset: string;
}

export function resolveCodeSpec(config: CodeConfigInput = {}): CodeSpec {
  const charset = config.charset === undefined ? DEFAULT_CHARSET : (CHARSET_PRESETS[config.charset] ?? [...new Set(config.charset)].join(''));
  return {
    prefix: config.prefix ?? '',
    postfix: config.postfix ?? '',
    pattern: config.pattern ?? '#'.repeat(config.length ?? DEFAULT_CODE_LENGTH),
    charset,
  };
}

export function randomCharacters(spec: CodeSpec): number {
  let count = 0;
  for (const ch of spec.pattern) if (ch === '#') count++;
  return count;
}

/** How many distinct codes the spec can produce (Infinity beyond float range). */
export function codeSpaceSize(spec: CodeSpec): number {
  return spec.charset.length ** randomCharacters(spec);
}

/** Why the spec cannot yield `count` codes comfortably, or undefined when it can. */
export function codeSpecProblem(spec: CodeSpec, count: number): string | undefined {
  const length = spec.prefix.length + spec.pattern.length + spec.postfix.length;
  if (length > MAX_CODE_LENGTH) return `codes would be ${length} characters long; the limit is ${MAX_CODE_LENGTH}`;
  const space = codeSpaceSize(spec);
  // At most half the space may be asked for, so random draws keep finding free codes.
  if (space < 2 * count) {
    return `the code space holds ${space} codes (${spec.charset.length} characters ^ ${randomCharacters(spec)} random positions); ` +
      `${count} codes need at least ${2 * count}: use a longer length or pattern, or a larger charset`;
  }
  return undefined;
}

export function generateCode(spec: CodeSpec): string {
  let random = '';
  for (const ch of spec.pattern) random += ch === '#' ? spec.charset[randomInt(spec.charset.length)] : ch;
  return spec.prefix + random + spec.postfix;
}

/** Up to `count` distinct codes, none in `exclude`; fewer only when `maxDraws` random draws could not find more. */
export function drawCodes(spec: CodeSpec, count: number, exclude: ReadonlySet<string> = new Set(), maxDraws = count * 10 + 100): string[] {
  const codes = new Set<string>();
  for (let draws = 0; codes.size < count && draws < maxDraws; draws++) {
    const code = generateCode(spec);
    if (!exclude.has(code)) codes.add(code);
  }
  return [...codes];
}
