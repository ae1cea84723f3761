// The shape of a part of the batch commit statement: a CTE and its guard over named parameters (numbered by
// platform/statement-parts.ts), the values a batch gives them, and whether the batch needs the part at all.
import type { ParameterTypes, StatementPart } from '../../platform/statement-parts.js';
import type { BatchWrites } from './batch-writes.js';

/** A part's CTE, and its guard: a `CASE WHEN` branch naming the stale part (NULL: none). */
export type CommitSql = { cte: string; guard?: string };

export interface CommitPart<P extends ParameterTypes = ParameterTypes> extends StatementPart<BatchWrites, P, CommitSql> {
  /** Rows the part writes for a batch; a part with none is left out of the statement. */
  rows(w: BatchWrites): number;
}

/** Types a part from its literal (the parameter names checked against its SQL and values). */
export const defineCommitPart = <P extends ParameterTypes>(part: CommitPart<P>): CommitPart<P> => part;

export const columnOf = <T, K extends keyof T>(rows: readonly T[], key: K): Array<T[K]> => rows.map((r) => r[key]);
