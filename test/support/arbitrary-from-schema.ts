// fast-check arbitraries of values that satisfy a JSON Schema (as z.toJSONSchema emits it), with extreme values:
// NUL and astral characters, integer bounds, longest strings. They reach past validation into handlers and SQL.
import fc from 'fast-check';

type Schema = Record<string, any>;

const nastyString = (min = 0, max = 40) =>
  fc.oneof(
    fc.string({ minLength: min, maxLength: max, unit: 'binary' }),
    fc.constantFrom('\u0000', 'a\u0000b', '😀', "'; DROP TABLE vouchers; --", '%s%n', '\\').filter((s) => s.length >= min && s.length <= max),
    fc.constant('x'.repeat(max)).filter((s) => s.length >= min),
  );

export function arbitraryFromSchema(schema: Schema, root: Schema = schema): fc.Arbitrary<unknown> {
  if (schema.$ref) return arbitraryFromSchema(root.$defs?.[String(schema.$ref).split('/').pop()!] ?? {}, root);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s: Schema) => arbitraryFromSchema(s, root)));
  if (schema.allOf) return arbitraryFromSchema(Object.assign({}, ...schema.allOf), root);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 200) && s.length >= (schema.minLength ?? 0));
      return nastyString(schema.minLength ?? 0, Math.min(schema.maxLength ?? 40, 300));
    case 'integer': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : Number.MIN_SAFE_INTEGER);
      const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : Number.MAX_SAFE_INTEGER);
      return fc.oneof(fc.integer({ min: Math.max(min, -1e6), max: Math.min(max, 1e6) }), fc.constantFrom(min, max));
    }
    case 'number':
      return fc.double({ min: schema.exclusiveMinimum ?? schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true, minExcluded: schema.exclusiveMinimum !== undefined });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(arbitraryFromSchema(schema.items ?? {}, root), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      if (!Object.keys(properties).length) return fc.dictionary(nastyString(1, 10), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
      const required = new Set<string>(schema.required ?? []);
      const shape = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, arbitraryFromSchema(s, root)]));
      return fc.record(shape, { requiredKeys: Object.keys(shape).filter((k) => required.has(k)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
