// Workspace resources and settings.
import { z } from 'zod';
import { Currency, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { RateLimit } from '../access/rate-limit.schemas.js';
import { TimeZone } from '../../contract/schedule.schemas.js';

/** The zone's canonical spelling as Intl resolves it (`europe/berlin` → `Europe/Berlin`, `utc` → `UTC`). */
export function canonicalTimeZone(value: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
}

export const StackLimit = z.number().int().min(1).max(30).meta({ description: 'At most this many vouchers in one stack (1..30).' });

export const Workspace = z
  .object({
    id: Uuid,
    name: z.string(),
    stackLimit: StackLimit,
    timeZone: TimeZone.meta({
      description:
        "The workspace's IANA time zone (default UTC): campaign budget days, weeks and months are counted in it, and " +
        'schedules without a timeZone of their own follow it.',
    }),
    rateLimit: RateLimit.nullable().meta({
      description: "The default limit of the workspace's keys that set none of their own; null: the server's (RATE_LIMIT_PER_KEY).",
    }),
    defaultCurrency: Currency.nullable().meta({
      description:
        'The currency a voucher whose amounts are money takes when neither it nor its campaign names one (stored on the ' +
        'voucher when it is made); null: none set, such vouchers and campaign templates need a currency of their own.',
    }),
    createdAt: Timestamp,
  })
  .meta({ id: 'Workspace' });
export type Workspace = z.infer<typeof Workspace>;

export const CreatedWorkspace = Workspace.extend({
  apiKey: z.string().meta({ description: "The new workspace's first `*` key. Shown in this response only." }),
}).meta({ id: 'CreatedWorkspace' });
export type CreatedWorkspace = z.infer<typeof CreatedWorkspace>;

export const WorkspaceName = z.string().trim().min(1).max(200);

export const CreateWorkspaceBody = z.object({ name: WorkspaceName });

export const UpdateWorkspaceBody = z.object({
  name: WorkspaceName.optional(),
  stackLimit: StackLimit.optional(),
  timeZone: TimeZone.optional(),
  rateLimit: RateLimit.nullable().optional().meta({
    description: "The default limit of keys without their own; null: back to the server's. Applies within a second.",
  }),
  defaultCurrency: Currency.optional().meta({
    description:
      'The workspace default currency. It may change (vouchers made before keep theirs) but not be removed: campaigns ' +
      'whose money templates name no currency rely on it.',
  }),
});
export type UpdateWorkspaceBody = z.infer<typeof UpdateWorkspaceBody>;
