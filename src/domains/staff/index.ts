// The staff domain's public surface: operations and handlers, the session cookie and its authenticator, settings,
// and the owner seed of the operator face (start-up's BOOTSTRAP_ADMIN_*).
export { staffContract, staffOperatorContract } from './staff.contract.js';
export { staffHandlers, staffOperatorHandlers, SESSION_TOKEN, type WithSessionToken } from './staff.handlers.js';
export {
  staffSessionAuthenticator,
  sessionCookie,
  clearedSessionCookie,
  sessionTokenOf,
  ownOrigins,
} from './staff-session-cookie.js';
export { staffSettingsFrom, staffSettingsOf, DEFAULT_STAFF_SETTINGS, type StaffSettingsInput } from './staff-settings.js';
export { scopesOfRole, STAFF_ROLES, type StaffRoleName } from './staff-role.rules.js';
