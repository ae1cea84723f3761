// Scope names and the one rule that grants them: `*` grants every group scope, `<group>:write` includes `:read`.
export const SCOPE_GROUPS = [
  'campaigns',
  'vouchers',
  'redemptions',
  'customers',
  'orders',
  'segments',
  'loyalty',
  'referrals',
  'rules',
  'events',
  'webhooks',
  'insights',
  'api-keys',
  'audit',
  'workspaces',
] as const;

export type ScopeGroup = (typeof SCOPE_GROUPS)[number];
/** The scope of operations anyone may call, signed in or not (signing in, accepting an invitation); never granted. */
export const NO_SCOPE = 'none';

export type Scope = '*' | `${ScopeGroup}:read` | `${ScopeGroup}:write` | 'workspaces:admin' | typeof NO_SCOPE;

export const ALL_SCOPES: readonly Scope[] = [
  '*',
  ...SCOPE_GROUPS.flatMap((g) => [`${g}:read`, `${g}:write`] as Scope[]),
  'workspaces:admin',
];

/** Only CLI-made keys and BOOTSTRAP_API_KEY hold workspaces:admin; `*` alone does not grant it. */
export const ADMIN_SCOPES: readonly Scope[] = ['*', 'workspaces:admin'];

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}

export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (required === NO_SCOPE) return true;
  if (granted.includes(required)) return true;
  if (required === 'workspaces:admin') return false;
  if (granted.includes('*')) return true;
  if (required.endsWith(':read')) return granted.includes(required.replace(/:read$/, ':write'));
  return false;
}
