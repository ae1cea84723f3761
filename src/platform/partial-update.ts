// PATCH semantics shared by every update: a field left out keeps its value, `null` clears it, a value sets it.

/** The names of the fields a patch sets (null included), passed to SQL as `$n::text[]` and tested with `= ANY`. */
export function presentFields(patch: object): string[] {
  return Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([field]) => field);
}
