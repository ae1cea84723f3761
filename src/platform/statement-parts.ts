// A statement built from named parts that declare their parameters by name and SQL type: numberParameters() gives them
// $1..$n and lays the values out in that order, so no part carries a number and adding or leaving out one shifts none.

/** A part's parameters: name → the SQL type cast at each use (`uuid[]`, `smallint`), numbered in declaration order. */
export type ParameterTypes = Readonly<Record<string, string>>;

/** What a part's SQL writes for each of its parameters: `$n::type`, the same n at every use within the part. */
export type ParameterRefs<P extends ParameterTypes> = { readonly [K in keyof P]: string };

/** A part's SQL as named pieces (a CTE, a guard…) that the statement puts where it belongs. */
export type SqlPieces = Readonly<Record<string, string | undefined>>;

export interface StatementPart<I, P extends ParameterTypes, S extends SqlPieces> {
  readonly name: string;
  readonly params: P;
  /** Writes the part's SQL with its parameters' references; called once per statement built. */
  sql(refs: ParameterRefs<P>): S;
  /** The part's values for one input, by parameter name. */
  values(input: I): { readonly [K in keyof P]: unknown };
}

export interface NumberedStatement<I, S extends SqlPieces> {
  /** Each part's SQL by part name, in the order of the parts. */
  readonly sql: ReadonlyMap<string, S>;
  /** The values for one input, in $n order. */
  values(input: I): unknown[];
}

/**
 * Numbers the parameters $1..$n, parts in the order given and each part's in declaration order, so the same parts
 * give the same text (a prepared statement per set of parts stays valid). A name is scoped to its part: written twice
 * in one part it is one number; two parts that need the same value each declare it and get a number each, so no part
 * depends on another being present. A declared parameter that the part's SQL never writes is a bug, thrown here:
 * PostgreSQL could not type it.
 */
export function numberParameters<I, S extends SqlPieces>(
  parts: ReadonlyArray<StatementPart<I, ParameterTypes, S>>,
): NumberedStatement<I, S> {
  const sql = new Map<string, S>();
  const order: Array<{ part: StatementPart<I, ParameterTypes, S>; names: string[] }> = [];
  let next = 1;
  for (const part of parts) {
    if (sql.has(part.name)) throw new Error(`statement part ${part.name} is given twice`);
    const names = Object.keys(part.params);
    const refs = Object.fromEntries(names.map((name) => [name, `$${next++}::${part.params[name]}`]));
    const pieces = part.sql(refs);
    const written = Object.values(pieces).join('\n');
    // `$1::` is no prefix of `$10::`, so a plain substring test is exact.
    const unused = names.filter((name) => !written.includes(refs[name]!));
    if (unused.length) throw new Error(`statement part ${part.name} declares parameters it never writes: ${unused.join(', ')}`);
    sql.set(part.name, pieces);
    order.push({ part, names });
  }
  return {
    sql,
    values: (input) =>
      order.flatMap(({ part, names }) => {
        const values = part.values(input);
        return names.map((name) => values[name]);
      }),
  };
}
