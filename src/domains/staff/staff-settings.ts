// What the staff domain reads of the configuration (session lifetimes, sign-in throttling, the public origin): built
// once per service at the composition root, with the throttle's state, and read from ServiceDeps.settings.
import type { Config } from '../../config.js';
import type { StaffSettings } from '../../contract/service-settings.js';
import { SignInThrottle } from './sign-in-throttle.js';

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

/** The settings with a fresh sign-in throttle (its counts start empty). */
export function staffSettingsOf(input: StaffSettingsInput): StaffSettings {
  return Object.freeze({ ...input, throttle: new SignInThrottle(input.throttle) });
}
