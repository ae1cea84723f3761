// The client package's type generator: JSON Schemas from zod become TypeScript that says what the schemas say.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TypeWriter } from '../../scripts/client-package/json-schema-to-ts.mjs';

const convert = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { io, unrepresentable: 'any' });
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('JSON Schema to TypeScript', () => {
  it('renders a discriminated union on a literal, named once, and an enum as a union of literals', () => {
    const Code = z.enum(['a_code', 'b_code']).meta({ id: 'Code' });
    const Outcome = z
      .discriminatedUnion('ok', [z.object({ ok: z.literal(true), id: z.string() }), z.object({ ok: z.literal(false), code: Code })])
      .meta({ id: 'Outcome' });
    const writer = new TypeWriter();
    expect(writer.typeOf(convert(Outcome, 'output'), 'output')).toBe('Outcome');
    const declarations = squash(writer.declarations());
    expect(declarations).toContain('export type Code = "a_code" | "b_code";');
    expect(declarations).toContain('export type Outcome = { ok: true; id: string; } | { ok: false; code: Code; };');
  });

  it('makes optional input fields accept undefined, fields with defaults optional, and names a differing input form <id>Input', () => {
    const Settings = z.object({ limit: z.number().int().default(20), note: z.string().optional() }).meta({ id: 'Settings' });
    const writer = new TypeWriter();
    expect(writer.typeOf(convert(Settings, 'output'), 'output')).toBe('Settings');
    expect(squash(writer.typeOf(convert(z.object({ settings: Settings }), 'input'), 'input'))).toBe('{ settings: SettingsInput; }');
    const declarations = squash(writer.declarations());
    expect(declarations).toContain('export type Settings = { limit: number; note?: string; };');
    expect(declarations).toContain('export type SettingsInput = { limit?: number | undefined; note?: string | undefined; };');
  });

  it('renders nullable, arrays, records, open objects and unknown values', () => {
    const Shape = z.object({
      maybe: z.string().nullable(),
      tags: z.array(z.union([z.string(), z.number()])),
      metadata: z.record(z.string(), z.unknown()),
      loose: z.looseObject({ id: z.string() }),
      anything: z.unknown(),
      'odd-key': z.boolean(),
    });
    const type = squash(new TypeWriter().typeOf(convert(Shape, 'output'), 'output'));
    expect(type).toContain('maybe: string | null;');
    expect(type).toContain('tags: (string | number)[];');
    expect(type).toContain('metadata: { [key: string]: unknown; };');
    expect(type).toContain('loose: { id: string; [key: string]: unknown; };');
    expect(type).toContain('anything: unknown;');
    expect(type).toContain('"odd-key": boolean;');
  });

  it('renames a schema id that the package entry exports itself', () => {
    const writer = new TypeWriter(['CallOptions']);
    expect(writer.typeOf(convert(z.object({ a: z.string() }).meta({ id: 'CallOptions' }), 'output'), 'output')).toBe('CallOptions2');
  });
});
