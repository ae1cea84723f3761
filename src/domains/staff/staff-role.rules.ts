// Staff roles as scopes (the contract's table), and who may hand out which role: only a role whose every scope the
// giver holds, as with API keys.
import { hasScope, SCOPE_GROUPS, type Scope, type ScopeGroup } from '../../contract/scopes.js';

export const STAFF_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type StaffRoleName = (typeof STAFF_ROLES)[number];

const MEMBER_WRITES: readonly ScopeGroup[] = ['campaigns', 'vouchers', 'redemptions', 'customers', 'orders', 'segments', 'loyalty', 'referrals', 'rules'];
const MEMBER_READS: readonly ScopeGroup[] = ['events', 'webhooks', 'insights'];
const HIDDEN_FROM_VIEWERS: readonly ScopeGroup[] = ['api-keys', 'audit'];

const ROLE_SCOPES: Readonly<Record<StaffRoleName, readonly Scope[]>> = Object.freeze({
  owner: ['*'],
  admin: [...SCOPE_GROUPS.filter((g) => g !== 'audit').map((g) => `${g}:write` as Scope), 'audit:read'],
  member: [...MEMBER_WRITES.map((g) => `${g}:write` as Scope), ...MEMBER_READS.map((g) => `${g}:read` as Scope)],
  viewer: SCOPE_GROUPS.filter((g) => !HIDDEN_FROM_VIEWERS.includes(g)).map((g) => `${g}:read` as Scope),
});

export function scopesOfRole(role: StaffRoleName): readonly Scope[] {
  return ROLE_SCOPES[role];
}

/** An actor may give (or take away) a role only when it holds every scope of that role. */
export function mayGrantRole(granted: readonly string[], role: StaffRoleName): boolean {
  return ROLE_SCOPES[role].every((scope) => hasScope(granted, scope));
}
