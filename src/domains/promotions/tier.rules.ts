// A promotion tier is a voucher row of kind TIER whose code is derived from its id: the one place that says how.
export const tierCode = (tierId: string) => `tier:${tierId}`;
