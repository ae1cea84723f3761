import { describe, expect, it } from 'vitest';
import { numberParameters, type ParameterTypes, type StatementPart } from '../../src/platform/statement-parts.js';

type Input = { ids: string[]; names: string[]; limit: number };
type Pieces = { cte: string; guard?: string };
const part = <P extends ParameterTypes>(p: StatementPart<Input, P, Pieces>) => p;

const people = part({
  name: 'people',
  params: { ids: 'uuid[]', names: 'text[]' },
  values: (i) => ({ ids: i.ids, names: i.names }),
  sql: (p) => ({ cte: `people AS (SELECT * FROM unnest(${p.ids}, ${p.names}))`, guard: `cardinality(${p.ids}) > 0` }),
});
const capped = part({
  name: 'capped',
  params: { limit: 'int' },
  values: (i) => ({ limit: i.limit }),
  sql: (p) => ({ cte: `capped AS (SELECT ${p.limit} AS cap)` }),
});
const again = part({
  name: 'again',
  params: { ids: 'uuid[]' },
  values: (i) => ({ ids: i.ids }),
  sql: (p) => ({ cte: `again AS (SELECT * FROM unnest(${p.ids}))` }),
});
const input: Input = { ids: ['a', 'b'], names: ['Ann', 'Bob'], limit: 7 };

describe('numberParameters', () => {
  it('numbers parts in the order given and each part\'s parameters in declaration order, values alike', () => {
    const statement = numberParameters([people, capped, again]);
    expect([...statement.sql.keys()]).toEqual(['people', 'capped', 'again']);
    expect(statement.sql.get('people')!.cte).toBe('people AS (SELECT * FROM unnest($1::uuid[], $2::text[]))');
    expect(statement.sql.get('capped')!.cte).toBe('capped AS (SELECT $3::int AS cap)');
    expect(statement.sql.get('again')!.cte).toBe('again AS (SELECT * FROM unnest($4::uuid[]))');
    expect(statement.values(input)).toEqual([input.ids, input.names, 7, input.ids]);
  });

  it('gives a parameter one number wherever its part writes it (a CTE and its guard)', () => {
    const statement = numberParameters([people]);
    expect(statement.sql.get('people')!.guard).toBe('cardinality($1::uuid[]) > 0');
    expect(statement.values(input)).toHaveLength(2);
  });

  it('gives the same name in two parts a number each, the value sent twice', () => {
    const statement = numberParameters([people, again]);
    expect(statement.sql.get('again')!.cte).toContain('$3::uuid[]');
    expect(statement.values(input)).toEqual([input.ids, input.names, input.ids]);
  });

  it('numbers the parts that follow a left-out part after those before it, with no number written by hand', () => {
    const without = numberParameters([people, again]);
    const withIt = numberParameters([people, capped, again]);
    expect(without.sql.get('people')).toEqual(withIt.sql.get('people'));
    expect(without.sql.get('again')!.cte).toBe('again AS (SELECT * FROM unnest($3::uuid[]))');
    expect(withIt.sql.get('again')!.cte).toBe('again AS (SELECT * FROM unnest($4::uuid[]))');
    expect(without.values(input)[2]).toBe(input.ids);
  });

  it('writes the same text for the same parts, so a prepared statement per set of parts stays valid', () => {
    const first = numberParameters([people, capped]);
    const second = numberParameters([people, capped]);
    expect([...second.sql]).toEqual([...first.sql]);
  });

  it('refuses a declared parameter that the part never writes, and a part given twice', () => {
    const unwritten = part({
      name: 'unwritten',
      params: { ids: 'uuid[]', spare: 'int' },
      values: (i) => ({ ids: i.ids, spare: 1 }),
      sql: (p) => ({ cte: `unwritten AS (SELECT * FROM unnest(${p.ids}))` }),
    });
    expect(() => numberParameters([unwritten])).toThrow('statement part unwritten declares parameters it never writes: spare');
    expect(() => numberParameters([people, people])).toThrow('statement part people is given twice');
  });
});
