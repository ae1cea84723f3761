// Staff operations: sessions (sign in and out, the current one, a password change), invitations, staff users.
// Signing in and accepting an invitation need no credentials (scope `none`); their REST routes set the cookie.
import { z } from 'zod';
import { ListQuery, listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import {
  AcceptInvitationBody,
  BootstrapOwnerBody,
  BootstrappedOwner,
  ChangePasswordBody,
  CreatedStaffInvitation,
  CreateInvitationBody,
  SignInBody,
  StaffSession,
  StaffUser,
  UpdateStaffUserBody,
} from './staff.schemas.js';

const sessionTags = ['Staff sessions'];
const staffTags = ['Staff users'];
const params = z.object({ id: Uuid });

export const staffContract = {
  signIn: defineOperation({
    name: 'sessions.create',
    method: 'post',
    path: '/sessions',
    scope: 'none',
    effect: 'sign-in',
    summary: 'Sign in a staff user',
    description:
      'Sets the session cookie (HttpOnly, SameSite=Strict, Path=/; Secure behind https). A wrong password and an unknown ' +
      'email get the same 401; repeated failures per email or client address get 429 with Retry-After.',
    tags: sessionTags,
    body: SignInBody,
    output: StaffSession,
    successStatus: 201,
  }),
  currentSession: defineOperation({
    name: 'sessions.current',
    method: 'get',
    path: '/sessions/current',
    scope: 'none',
    summary: 'The signed-in staff user and when the session ends',
    description: '401 without a live session cookie.',
    tags: sessionTags,
    output: StaffSession,
  }),
  signOut: defineOperation({
    name: 'sessions.delete',
    method: 'delete',
    path: '/sessions/current',
    scope: 'none',
    summary: 'Sign out: the session cookie is dead from now on',
    tags: sessionTags,
  }),
  changePassword: defineOperation({
    name: 'sessions.changePassword',
    method: 'put',
    path: '/sessions/current/password',
    scope: 'none',
    summary: "Change the signed-in staff user's password; every session of the user ends",
    tags: sessionTags,
    body: ChangePasswordBody,
  }),
  createInvitation: defineOperation({
    name: 'staffInvitations.create',
    method: 'post',
    path: '/staff-invitations',
    scope: 'workspaces:write',
    summary: 'Invite a staff user',
    description: 'The token (and the dashboard link holding it) is in this response only; it works once, until `expiresAt`. ' +
      'A caller can only invite to a role whose scopes it holds.',
    tags: staffTags,
    body: CreateInvitationBody,
    output: CreatedStaffInvitation,
    successStatus: 201,
  }),
  acceptInvitation: defineOperation({
    name: 'staffInvitations.accept',
    method: 'post',
    path: '/staff-invitations/accept',
    scope: 'none',
    effect: 'sign-in',
    summary: 'Accept an invitation: creates the staff user and signs it in',
    description: 'A used, expired or unknown token is 400 and creates nothing.',
    tags: staffTags,
    body: AcceptInvitationBody,
    output: StaffSession,
    successStatus: 201,
  }),
  listStaffUsers: defineOperation({
    name: 'staffUsers.list',
    method: 'get',
    path: '/staff-users',
    scope: 'workspaces:read',
    summary: 'List staff users, newest first',
    tags: staffTags,
    query: ListQuery,
    output: listEnvelope(StaffUser, 'StaffUserList'),
  }),
  updateStaffUser: defineOperation({
    name: 'staffUsers.update',
    method: 'patch',
    path: '/staff-users/{id}',
    scope: 'workspaces:write',
    summary: "Change a staff user's role or name",
    description: 'A caller can only give, or take away, a role whose scopes it holds. The last owner stays an owner (409).',
    tags: staffTags,
    params,
    body: UpdateStaffUserBody,
    output: StaffUser,
  }),
  deleteStaffUser: defineOperation({
    name: 'staffUsers.delete',
    method: 'delete',
    path: '/staff-users/{id}',
    scope: 'workspaces:write',
    summary: 'Remove a staff user; its sessions end at once',
    description: 'The last owner cannot be removed (409).',
    tags: staffTags,
    params,
  }),
};

/**
 * Run only by the operator face (transports/operator-pipeline.ts: start-up), in no registry, so no network face serves
 * it; its method and path are nominal.
 */
export const staffOperatorContract = {
  bootstrapOwner: defineOperation({
    name: 'staffUsers.bootstrap',
    method: 'post',
    path: '/staff-users/bootstrap',
    scope: '*',
    summary: "Seed an owner of the actor's workspace (BOOTSTRAP_ADMIN_EMAIL), unless the email is staff anywhere",
    tags: staffTags,
    body: BootstrapOwnerBody,
    output: BootstrappedOwner,
    successStatus: 201,
    existingStatus: 200,
  }),
};
