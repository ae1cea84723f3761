// Secret fields (API key plaintext, webhook secrets, passwords, tokens): marked once in the schemas with secret(),
// found by walking the registry's schemas, and stripped in one place (redactSecrets) before anything is recorded.
import { z } from 'zod';

const SECRET_META = 'x-secret';

/** Marks a schema as a secret: it is shown to its caller at most once and never recorded (audit log, events, logs). */
export function secret<T extends z.ZodType>(schema: T): T {
  return schema.meta({ ...schema.meta(), [SECRET_META]: true }) as T;
}

function isSecret(schema: z.ZodType): boolean {
  return (schema.meta() as Record<string, unknown> | undefined)?.[SECRET_META] === true;
}

/** The property names of the given schemas (objects, arrays, unions, wrappers), those marked secret and the others. */
function fieldNames(schemas: ReadonlyArray<z.ZodType | undefined>): { secret: Set<string>; open: Set<string> } {
  const secret = new Set<string>();
  const open = new Set<string>();
  const seen = new Set<z.ZodType>();
  const visit = (schema: z.ZodType | undefined): void => {
    if (!schema || seen.has(schema)) return;
    seen.add(schema);
    const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === 'object') {
      for (const [name, field] of Object.entries((schema as z.ZodObject).shape as Record<string, z.ZodType>)) {
        (isSecret(field) || isSecret(unwrap(field)) ? secret : open).add(name);
        visit(field);
      }
      return;
    }
    for (const key of ['innerType', 'element', 'in', 'out', 'left', 'right', 'valueType']) visit(def[key] as z.ZodType | undefined);
    for (const option of (def.options as z.ZodType[] | undefined) ?? []) visit(option);
  };
  for (const schema of schemas) visit(schema);
  return { secret, open };
}

/** The property names that are secrets anywhere in the given schemas (objects, arrays, unions, wrappers). */
export function secretFieldNames(schemas: ReadonlyArray<z.ZodType | undefined>): ReadonlySet<string> {
  return fieldNames(schemas).secret;
}

/**
 * The names one operation's records are redacted by: every secret name of the registry (`all`), except those the
 * operation's own schemas declare as plain fields and never as secrets. A reward type's `key` is its name, shown in its
 * audit entry; an API key's `key` stays redacted everywhere else, including in operations that do not mention it.
 */
export function secretFieldNamesFor(all: ReadonlySet<string>, schemas: ReadonlyArray<z.ZodType | undefined>): ReadonlySet<string> {
  const own = fieldNames(schemas);
  const names = new Set([...all].filter((name) => own.secret.has(name) || !own.open.has(name)));
  return names.size === all.size ? all : names;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 10; i++) {
    const inner = (current as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
    if (!inner) return current;
    current = inner;
  }
  return current;
}

export const REDACTED = '[redacted]';

/** A copy of `value` with every property named in `names` replaced, at any depth. */
export function redactSecrets(value: unknown, names: ReadonlySet<string>, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, names, depth + 1));
  if (value instanceof Date) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = names.has(key) ? REDACTED : redactSecrets(item, names, depth + 1);
  return copy;
}
