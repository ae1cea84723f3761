// What handlers read of the configuration, built once per process at the composition root (src/composition.ts) and
// handed to them in ServiceDeps: no module holds settings. The domains fill these shapes (staffSettingsOf, webhookSettingsFrom).

/** What the webhooks domain needs: the key sealing signing secrets, the target policy, the delivery schedule. */
export interface WebhookSettings {
  /** AES-256-GCM key sealing the signing secrets at rest. */
  secretsKey: Buffer;
  allowPrivateTargets: boolean;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
}

export interface SignInAttempt {
  email: string;
  address: string;
  at: number;
}

export type SignInDecision = { allowed: true; attempt: SignInAttempt } | { allowed: false; retryAfterSeconds: number };

/** Sign-in throttling: an attempt is counted when it starts; a success takes its count back. */
export interface SignInGate {
  begin(email: string, address: string, now?: number): SignInDecision;
  succeeded(attempt: SignInAttempt): void;
}

/** What the staff domain needs: the public origin, session lifetimes, and the sign-in throttle (its state with it). */
export interface StaffSettings {
  /** The service's public origin (`https://promo.example.com`); unset: the loopback origins of the listening port. */
  publicUrl: string | undefined;
  trustProxy: boolean;
  sessionIdleMs: number;
  sessionMaxAgeMs: number;
  invitationTtlMs: number;
  throttle: SignInGate;
}

/** One service's settings. The fields may be replaced as a whole (a test changes its own service's policy). */
export interface ServiceSettings {
  staff: StaffSettings;
  webhooks: WebhookSettings;
}
