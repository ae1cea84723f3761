// What the staff domain needs from the configuration (session lifetimes, sign-in throttling, the public origin), set
// once per process by its composition root (main.ts, a test), as the webhooks domain does; with the throttle's state.
import type { Config } from '../../config.js';
import { SignInThrottle } from './sign-in-throttle.js';

export interface StaffSettings {
  /** The service's public origin (`https://promo.example.com`); unset: the loopback origins of the listening port. */
  publicUrl: string | undefined;
  trustProxy: boolean;
  sessionIdleMs: number;
  sessionMaxAgeMs: number;
  invitationTtlMs: number;
  throttle: SignInThrottle;
}

export interface StaffSettingsInput extends Omit<StaffSettings, 'throttle'> {
  throttle: { maxFailuresPerEmail: number; maxFailuresPerAddress: number; windowMs: number };
}

export function staffSettingsFrom(config: Config): StaffSettingsInput {
  return {
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    sessionIdleMs: config.staffSessionIdleMs,
    sessionMaxAgeMs: config.staffSessionMaxAgeMs,
    invitationTtlMs: config.staffInvitationTtlMs,
    throttle: {
      maxFailuresPerEmail: config.signInMaxFailuresPerEmail,
      maxFailuresPerAddress: config.signInMaxFailuresPerAddress,
      windowMs: config.signInThrottleWindowMs,
    },
  };
}

export const DEFAULT_STAFF_SETTINGS: StaffSettingsInput = Object.freeze({
  publicUrl: undefined,
  trustProxy: false,
  sessionIdleMs: 2 * 3_600_000,
  sessionMaxAgeMs: 12 * 3_600_000,
  invitationTtlMs: 7 * 86_400_000,
  throttle: { maxFailuresPerEmail: 5, maxFailuresPerAddress: 20, windowMs: 15 * 60_000 },
});

let current: StaffSettings = build(DEFAULT_STAFF_SETTINGS);

function build(input: StaffSettingsInput): StaffSettings {
  return Object.freeze({ ...input, throttle: new SignInThrottle(input.throttle) });
}

export function configureStaff(input: StaffSettingsInput): void {
  current = build(input);
}

export function staffSettings(): StaffSettings {
  return current;
}
