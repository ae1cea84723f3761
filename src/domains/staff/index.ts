// The staff domain's public surface: operations and handlers, the session cookie and its authenticator, settings,
// and what start-up and the CLI use (the bootstrap owner, invitations).
export { staffContract } from './staff.contract.js';
export { staffHandlers, SESSION_TOKEN, type WithSessionToken } from './staff.handlers.js';
export {
  staffSessionAuthenticator,
  sessionCookie,
  clearedSessionCookie,
  sessionTokenOf,
  ownOrigins,
} from './staff-session-cookie.js';
export { configureStaff, staffSettings, staffSettingsFrom, DEFAULT_STAFF_SETTINGS, type StaffSettings, type StaffSettingsInput } from './staff-settings.js';
export { ensureBootstrapOwner, inviteStaffUser } from './staff.service.js';
export { scopesOfRole, STAFF_ROLES, type StaffRoleName } from './staff-role.rules.js';
