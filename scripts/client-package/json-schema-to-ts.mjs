// TypeScript declarations from the JSON Schemas zod emits (z.toJSONSchema): the subset our schemas use, named
// components ($defs) once per mode, inputs with `?: T | undefined` (as zod accepts) and outputs with `?: T`.

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function propertyKey(name) {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function docComment(text, indent) {
  if (typeof text !== 'string' || !text.trim()) return '';
  const lines = text.replaceAll('*/', '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function literal(value) {
  return value === null ? 'null' : JSON.stringify(value);
}

function union(members) {
  const unique = [...new Set(members)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 0 ? 'never' : unique.join(' | ');
}

function wrap(type) {
  return /[|&]/.test(type) && !/^[{(\[]/.test(type) ? `(${type})` : type;
}

/**
 * Collects the named schemas of every conversion and renders types. `mode` is 'input' or 'output': a component
 * renders differently in each (defaults make fields optional in an input), so each mode names its own variant.
 */
export class TypeWriter {
  /** `${mode}:${json}` → type name */
  #named = new Map();
  /** type name → declaration text */
  #declarations = new Map();
  #taken = new Set();
  #outputIds = new Set();

  constructor(reserved = []) {
    for (const name of reserved) this.#taken.add(name);
  }

  /** The TypeScript type of one converted schema (its $defs become named declarations). Convert every output first. */
  typeOf(jsonSchema, mode) {
    const local = new Map();
    const defs = Object.entries(jsonSchema.$defs ?? {});
    // Names first, so that definitions referring to each other (or to themselves) resolve.
    for (const [name, def] of defs) local.set(name, this.#nameFor(name, def, mode));
    for (const [name, def] of defs) {
      const typeName = local.get(name);
      if (this.#declarations.has(typeName)) continue;
      this.#declarations.set(typeName, '');
      const body = this.#render(def, mode, local, '');
      this.#declarations.set(typeName, `${docComment(def.description, '')}export type ${typeName} = ${body};\n`);
    }
    const { $defs: _defs, $schema: _schema, ...root } = jsonSchema;
    return this.#render(root, mode, local, '');
  }

  declarations() {
    return [...this.#declarations.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, text]) => text).join('\n');
  }

  #nameFor(id, def, mode) {
    const json = JSON.stringify(def);
    const known = this.#named.get(`${mode}:${json}`) ?? (mode === 'input' ? this.#named.get(`output:${json}`) : undefined);
    if (known) {
      this.#named.set(`${mode}:${json}`, known);
      return known;
    }
    // The output variant keeps the id; an input variant that differs from it is `<id>Input`.
    const base = mode === 'input' && this.#outputIds.has(id) ? `${id}Input` : id;
    let name = base;
    for (let n = 2; this.#taken.has(name); n++) name = `${base}${n}`;
    this.#taken.add(name);
    if (mode === 'output') this.#outputIds.add(id);
    this.#named.set(`${mode}:${json}`, name);
    return name;
  }

  #render(schema, mode, local, indent) {
    if (schema === true || schema === undefined) return 'unknown';
    if (schema === false) return 'never';
    if (schema.$ref !== undefined) {
      const name = local.get(schema.$ref.replace(/^#\/\$defs\//, ''));
      if (name) return name;
      console.warn(`client package: unresolved $ref ${schema.$ref}, typed as unknown`);
      return 'unknown';
    }
    if ('const' in schema) return literal(schema.const);
    if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
    const alternatives = schema.oneOf ?? schema.anyOf;
    if (Array.isArray(alternatives)) return union(alternatives.map((s) => this.#render(s, mode, local, indent)));
    if (Array.isArray(schema.allOf)) return schema.allOf.map((s) => wrap(this.#render(s, mode, local, indent))).join(' & ');
    const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
    if (types.length === 0) return 'unknown';
    return union(types.map((type) => this.#renderType(type, schema, mode, local, indent)));
  }

  #renderType(type, schema, mode, local, indent) {
    switch (type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map((s) => this.#render(s, mode, local, indent)).join(', ')}]`;
        return `${wrap(this.#render(schema.items, mode, local, indent))}[]`;
      case 'object':
        return this.#renderObject(schema, mode, local, indent);
      default:
        console.warn(`client package: JSON Schema type ${type} typed as unknown`);
        return 'unknown';
    }
  }

  #renderObject(schema, mode, local, indent) {
    const properties = Object.entries(schema.properties ?? {});
    const required = new Set(schema.required ?? []);
    const extra = schema.additionalProperties;
    // No properties and nothing said about others: an object of any shape.
    const open = extra !== undefined && extra !== false ? extra : properties.length === 0 && schema.properties === undefined ? true : undefined;
    if (properties.length === 0 && open === undefined) return 'Record<string, never>';
    const inner = `${indent}  `;
    const lines = properties.map(([name, property]) => {
      const type = this.#render(property, mode, local, inner);
      const optional = !required.has(name);
      const declared = optional && mode === 'input' ? `${type} | undefined` : type;
      return `${docComment(property.description, inner)}${inner}${propertyKey(name)}${optional ? '?' : ''}: ${declared};`;
    });
    if (open !== undefined) {
      // With named properties the index signature must admit them all, so it says `unknown`.
      const valueType = properties.length ? 'unknown' : this.#render(open, mode, local, inner);
      const keyType = schema.propertyNames && Array.isArray(schema.propertyNames.enum) ? union(schema.propertyNames.enum.map(literal)) : undefined;
      if (keyType && !properties.length) return `{ [K in ${keyType}]?: ${valueType} }`;
      lines.push(`${inner}[key: string]: ${valueType};`);
    }
    return `{\n${lines.join('\n')}\n${indent}}`;
  }
}
