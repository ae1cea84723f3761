// Verified API keys kept in memory for a few seconds, so the hot path does not read api_keys on every request.
// Revocation stays immediate: a revoke in this process clears the cache before it answers, and a revoke anywhere
// (another process, the CLI) sends NOTIFY api_keys_changed, which every web process listens for. The TTL bounds
// staleness should a notification be missed while the listener reconnects. One verifier per service, made by the
// composition root. The same notification carries rate-limit changes (a key's, a workspace's default): the re-verified
// key brings its new limit.
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Actor, Authenticator } from '../../contract/actor.js';
import { ProblemError } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import { listenForNotifications, type Listener } from '../../platform/notifications.js';
import { verifyApiKey } from './api-key.service.js';
import type { RateLimitSetting } from './rate-limit.schemas.js';

export const API_KEY_CHANNEL = 'api_keys_changed';
const TTL_MS = 5_000;
/** How long a key that verified is still recognised by a blocked address (rate-limit.ts's screen()). */
const RECOGNISED_MS = 15 * 60_000;

const digest = (token: string) => hash('sha256', token, 'base64');

export class ApiKeyVerifier {
  // Keyed by a digest of the token, so the cache never holds a usable secret.
  readonly #verified = new LRUCache<string, Actor>({ max: 10_000, ttl: TTL_MS });
  /** The rate limit each verified actor runs under (null: the server default); held as long as the actor is. */
  readonly #rateLimits = new WeakMap<Actor, RateLimitSetting | null>();
  /** Digests of tokens that verified lately: not proof of anything, only leave to be looked up from a blocked address. */
  readonly #recognised = new LRUCache<string, true>({ max: 10_000, ttl: RECOGNISED_MS });
  /** The cache serves only while a listener keeps it honest. */
  #listener: Listener | undefined;

  constructor(
    private readonly db: Sql,
    private readonly log: Logger,
  ) {}

  get caching(): boolean {
    return this.#listener?.listening === true;
  }

  forget(): void {
    this.#verified.clear();
  }

  /** The key's actor, or undefined for a malformed, unknown or revoked key. */
  async verify(token: string): Promise<Actor | undefined> {
    const onTouchError = (e: unknown) => this.log.warn({ err: e }, 'could not record API key use');
    const id = digest(token);
    const hit = this.caching ? this.#verified.get(id) : undefined;
    if (hit) return hit;
    const verified = await verifyApiKey(this.db, token, onTouchError);
    if (!verified) return undefined;
    this.#rateLimits.set(verified.actor, verified.rateLimit);
    this.#recognised.set(id, true);
    if (this.caching) this.#verified.set(id, verified.actor);
    return verified.actor;
  }

  /** The rate limit of an actor this verifier made (null: the server default), undefined for any other actor. */
  rateLimitOf(actor: Actor): RateLimitSetting | null | undefined {
    return this.#rateLimits.get(actor);
  }

  /**
   * Whether this Authorization header holds a key that verified in the last 15 minutes (no database read). It proves
   * nothing (the key may be revoked since): a blocked address may only have such a key looked up as usual.
   */
  recognizes(authorization: string | undefined): boolean {
    if (!authorization?.startsWith('Bearer ')) return false;
    return this.#recognised.has(digest(authorization.slice(7).trim()));
  }

  /** LISTENs for key changes on a dedicated connection; reconnects on loss. */
  listen(connectionString: string): Listener {
    // Whatever was revoked while the connection was down is forgotten at every (re)connect.
    const listener = listenForNotifications(connectionString, this.log, { [API_KEY_CHANNEL]: () => this.forget() }, () => this.forget());
    this.#listener = listener;
    return listener;
  }
}

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="api"' };

/** `Authorization: Bearer <API key>`; not its kind without a Bearer header, so a cookie authenticator may answer. */
export function apiKeyAuthenticator(verifier: ApiKeyVerifier): Authenticator {
  return {
    name: 'api_key',
    async authenticate(credentials) {
      const header = credentials.authorization;
      if (header === undefined) return undefined;
      const token = header.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
      if (!token) throw new ProblemError('unauthorized', 'send Authorization: Bearer <API key>', { headers: UNAUTHORIZED_HEADERS });
      const actor = await verifier.verify(token);
      if (!actor) throw new ProblemError('unauthorized', 'the API key is invalid or revoked', { headers: UNAUTHORIZED_HEADERS });
      return actor;
    },
  };
}

export { UNAUTHORIZED_HEADERS };
