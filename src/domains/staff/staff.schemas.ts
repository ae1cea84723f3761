// Staff users, sessions and invitations: inputs and outputs. Passwords and tokens are secrets: a token appears in
// its creation response only, a password never.
import { z } from 'zod';
import { Timestamp, Uuid } from '../../contract/common.schemas.js';
import { secret } from '../../contract/secrets.js';
import { STAFF_ROLES } from './staff-role.rules.js';

export const StaffRole = z.enum(STAFF_ROLES).meta({
  id: 'StaffRole',
  description:
    '`owner` (every scope), `admin` (every `:write` and `audit:read`), `member` (writes campaigns, vouchers, redemptions, ' +
    'customers, orders, segments, loyalty, referrals, rules; reads events, webhooks, insights), `viewer` (every `:read` ' +
    'but API keys and the audit log).',
});
export type StaffRole = z.infer<typeof StaffRole>;

const Email = z
  .email({ error: 'must be an email address' })
  .max(320)
  .transform((email) => email.toLowerCase())
  .meta({ description: 'Email address; matched without regard to case.', example: 'ada@example.com' });
const Name = z.string().trim().min(1).max(200);
export const Password = secret(
  z.string().min(12, 'must be at least 12 characters').max(1024).meta({ description: 'At least 12 characters.' }),
);

export const StaffUser = z
  .object({
    id: Uuid,
    email: z.string(),
    name: z.string().optional(),
    role: StaffRole,
    workspaceId: Uuid,
    scopes: z.array(z.string()).meta({ description: 'What the role allows, as API scopes.' }),
    createdAt: Timestamp,
  })
  .meta({ id: 'StaffUser' });
export type StaffUser = z.infer<typeof StaffUser>;

export const StaffSession = z
  .object({
    staffUser: StaffUser,
    expiresAt: Timestamp.meta({ description: 'When the session ends unless used (idle), at most its absolute end.' }),
  })
  .meta({ id: 'StaffSession' });
export type StaffSession = z.infer<typeof StaffSession>;

export const SignInBody = z.object({ email: Email, password: secret(z.string().min(1).max(1024)) });

export const ChangePasswordBody = z.object({ currentPassword: secret(z.string().min(1).max(1024)), newPassword: Password });

export const CreateInvitationBody = z.object({ email: Email, role: StaffRole });

export const StaffInvitation = z
  .object({ id: Uuid, email: z.string(), role: StaffRole, expiresAt: Timestamp, createdAt: Timestamp })
  .meta({ id: 'StaffInvitation' });
export type StaffInvitation = z.infer<typeof StaffInvitation>;

export const CreatedStaffInvitation = StaffInvitation.extend({
  token: secret(z.string().meta({ description: 'The one-time invitation token. Shown in this response only.' })),
  link: secret(z.string().meta({ description: 'The dashboard link that accepts the invitation (holds the token).' })),
}).meta({ id: 'CreatedStaffInvitation' });
export type CreatedStaffInvitation = z.infer<typeof CreatedStaffInvitation>;

export const AcceptInvitationBody = z.object({ token: secret(z.string().min(1).max(200)), password: Password, name: Name.optional() });

/** The operator face's seed (start-up's BOOTSTRAP_ADMIN_EMAIL and _PASSWORD): an owner with a password. */
export const BootstrapOwnerBody = z.object({ email: Email, password: Password });

export const BootstrappedOwner = z.object({
  outcome: z.enum(['created', 'present']).meta({ description: '`present`: a staff user with this email existed already; nothing changed.' }),
});

export const UpdateStaffUserBody = z.object({ role: StaffRole.optional(), name: Name.optional() });
