// Turns command-line words into an operation's input, guided by the JSON Schema of its merged zod input:
// path parameters as positionals, every other field as --field (kebab or camel case, dots for nesting).
import { z } from 'zod';
import type { Operation } from '../contract/operation.js';
import { wrap } from './output.js';

export class UsageError extends Error {}

type JsonSchema = {
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  items?: JsonSchema;
};

/** Follows a local `#/$defs/Name` reference (zod puts schemas with an id there). */
function deref(root: JsonSchema, node: JsonSchema | undefined): JsonSchema | undefined {
  for (let hops = 0; node?.$ref && hops < 10; hops++) {
    const name = /^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1];
    node = name ? root.$defs?.[name] : undefined;
  }
  return node;
}

const schemas = new WeakMap<Operation, JsonSchema>();

export function inputSchemaOf(operation: Operation): JsonSchema {
  let schema = schemas.get(operation);
  if (!schema) {
    schema = z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    schemas.set(operation, schema);
  }
  return schema;
}

export function pathParamsOf(operation: Operation): string[] {
  return [...operation.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
}

function typesOf(root: JsonSchema, schema: JsonSchema | undefined): Set<string> {
  const types = new Set<string>();
  schema = deref(root, schema);
  if (!schema) return types;
  for (const t of [schema.type ?? []].flat()) types.add(t);
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) for (const t of typesOf(root, alternative)) types.add(t);
  if (schema.enum) for (const value of schema.enum) types.add(value === null ? 'null' : typeof value);
  return types;
}

function alternativesOf(root: JsonSchema, node: JsonSchema | undefined): JsonSchema[] {
  const resolved = deref(root, node);
  if (!resolved) return [];
  return [resolved, ...[...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])].flatMap((s) => alternativesOf(root, s))];
}

/** The schema of a nested field (`order.amount`), looking through references and unions. */
export function schemaAt(root: JsonSchema, path: string[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    node = alternativesOf(root, node).map((s) => s.properties?.[key]).find(Boolean);
    if (!node) return undefined;
  }
  return deref(root, node);
}

/** A text value read as the field's type: numbers, booleans, null, JSON objects/arrays; otherwise the text itself. */
export function coerceValue(text: string, types: Set<string>, field: string): unknown {
  const trimmed = text.trim();
  if (trimmed === 'null' && types.has('null')) return null;
  if ((types.has('object') || types.has('array')) && /^[[{]/.test(trimmed)) {
    try {
      return JSON.parse(trimmed);
    } catch {
      throw new UsageError(`--${field}: not valid JSON`);
    }
  }
  if ((types.has('integer') || types.has('number')) && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(trimmed) && !types.has('string')) return Number(trimmed);
  if (types.has('boolean') && (trimmed === 'true' || trimmed === 'false') && !types.has('string')) return trimmed === 'true';
  if (types.size === 0 || types.has('string')) return text;
  // The field is not a string: hand the server what JSON makes of it, or the text, and let validation speak.
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Sets `a.b.c` in a nested object, creating the objects on the way. */
export function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  path.slice(0, -1).forEach((key) => {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  });
  node[path.at(-1)!] = value;
}

/** Sets one field given as text (a flag, or a CSV column named like a flag). */
export function setField(input: Record<string, unknown>, root: JsonSchema, name: string, text: string): void {
  const path = name.split('.').map(camel);
  const field = path.reduce<JsonSchema | undefined>((node, key) => alternativesOf(root, node).map((s) => s.properties?.[key]).find(Boolean), root);
  setPath(input, path, coerceValue(text, typesOf(root, field), name));
}

export interface ParsedWords {
  positionals: string[];
  flags: Map<string, string | true>;
}

/** `--a b`, `--a=b`, `--flag` (true), `--no-flag` (false); everything else is positional. `--` ends flags. */
export function splitWords(words: readonly string[], booleanFlags: ReadonlySet<string> = new Set()): ParsedWords {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') {
      positionals.push(...words.slice(i + 1));
      break;
    }
    if (!word.startsWith('--') || word === '-') {
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const name = word.slice(2, eq === -1 ? undefined : eq);
    if (eq !== -1) flags.set(name, word.slice(eq + 1));
    else if (booleanFlags.has(name) || i + 1 >= words.length || words[i + 1]!.startsWith('--')) flags.set(name, true);
    else flags.set(name, words[++i]!);
  }
  return { positionals, flags };
}

/** The operation's input from positionals (path parameters, in path order) and --field flags. */
export function inputFromWords(operation: Operation, positionals: readonly string[], flags: ReadonlyMap<string, string | true>, base: Record<string, unknown> = {}): Record<string, unknown> {
  const root = inputSchemaOf(operation);
  const input: Record<string, unknown> = { ...base };
  const params = pathParamsOf(operation);
  if (positionals.length > params.length) {
    throw new UsageError(`${operation.name} takes ${params.length ? params.map((p) => `<${p}>`).join(' ') : 'no positional arguments'}; got ${positionals.length}`);
  }
  positionals.forEach((value, i) => setField(input, root, params[i]!, value));
  for (const [name, value] of flags) {
    if (value === true) {
      const negated = name.startsWith('no-') ? name.slice(3) : undefined;
      setField(input, root, negated ?? name, negated ? 'false' : 'true');
    } else setField(input, root, name, value);
  }
  return input;
}

/** Help for one operation: usage line, summary and its fields with types and descriptions. */
export function operationHelp(operation: Operation, command: string): string {
  const root = inputSchemaOf(operation);
  const params = pathParamsOf(operation);
  const required = new Set(root.required ?? []);
  const lines = [
    `usage: promotions ${command}${params.map((p) => ` <${p}>`).join('')} [--field value ...]`,
    '',
    `${operation.summary}. (${operation.method.toUpperCase()} /api/v1${operation.path}, scope ${operation.scope})`,
    ...(operation.description ? ['', ...operation.description.split('\n')] : []),
    '',
    'fields:',
  ];
  for (const [name, schema] of Object.entries(root.properties ?? {})) {
    if (params.includes(name)) continue;
    const types = [...typesOf(root, schema)].join('|') || 'any';
    lines.push(`  --${name} <${types}>`);
    const note = [required.has(name) ? 'required' : '', schema.description ?? ''].filter(Boolean).join('; ');
    if (note) lines.push(`      ${note}`);
  }
  lines.push('', 'Objects and arrays are JSON (--order \'{"amount":1000,"currency":"EUR"}\') or', 'dotted (--order.amount 1000).');
  return lines.map((line) => wrap(line, /^ */.exec(line)![0].length || 0)).join('\n');
}

/** The fields of a list operation's items, in the schema's order, from every alternative of a union: the fixed
 *  header of a CSV export, whatever the first rows happen to hold. */
export function listItemFields(operation: Operation): string[] {
  if (!operation.output) return [];
  const root = z.toJSONSchema(operation.output, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const items = deref(root, schemaAt(root, ['data'])?.items);
  const fields: string[] = [];
  for (const alternative of alternativesOf(root, items)) {
    for (const field of Object.keys(alternative.properties ?? {})) if (!fields.includes(field)) fields.push(field);
  }
  return fields;
}
