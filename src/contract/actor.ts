// Who acts: the actor every operation runs as, resolved from a request by pluggable authenticators (or, for the
// operator face, named by start-up and the admin CLI themselves).
import { ADMIN_SCOPES } from './scopes.js';

export const ACTOR_TYPES = ['api_key', 'staff_user', 'system', 'cli'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface Actor {
  type: ActorType;
  id: string;
  /** What a person reading the audit log recognises: a key's name and prefix, a staff user's email, the CLI's user. */
  label: string;
  scopes: readonly string[];
  workspaceId: string;
  /** The session a staff user signed in with (its sign-out ends that one). */
  sessionId?: string | undefined;
}

/** Where a call came from, as the audit log records it. `requestId` is the response's X-Request-Id. */
export interface RequestMeta {
  requestId: string;
  ip?: string | undefined;
  userAgent?: string | undefined;
}

/** What authenticators may read of a request (every face hands over the same parts). */
export interface Credentials {
  method: string;
  authorization?: string | undefined;
  cookie?: string | undefined;
  origin?: string | undefined;
  secFetchSite?: string | undefined;
}

/**
 * One way of proving who calls. `undefined`: these credentials are not of this kind (the next authenticator is
 * asked); an Actor: proven; a thrown ProblemError (401/403): of this kind, but refused.
 */
export interface Authenticator {
  name: string;
  authenticate(credentials: Credentials): Promise<Actor | undefined>;
}

/** The actor of the service's own work (scheduled jobs, start-up's BOOTSTRAP_* seeds), recorded as such. */
export function systemActor(workspaceId: string, label = 'system', scopes: readonly string[] = ['*']): Actor {
  return { type: 'system', id: 'system', label, scopes, workspaceId };
}

/**
 * The operator at the admin CLI, named by its OS user (and host). It holds every scope, `workspaces:admin` included:
 * whoever reaches the database already has that power, so the CLI proves nothing more (and needs no key to start).
 */
export function cliActor(workspaceId: string, operator: { user: string; host: string }): Actor {
  return { type: 'cli', id: operator.user, label: `${operator.user}@${operator.host} (CLI)`, scopes: ADMIN_SCOPES, workspaceId };
}
