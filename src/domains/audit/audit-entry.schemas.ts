// The audit log's resources: an entry as recorded (who did what to which resource, from where) and the list filters.
import { z } from 'zod';
import { ACTOR_TYPES } from '../../contract/actor.js';
import { ListQuery, Timestamp, Uuid } from '../../contract/common.schemas.js';

const ActorType = z.enum(ACTOR_TYPES).meta({ description: 'An API key, a staff user signed in to the dashboard, the service itself, or an operator at the admin CLI.' });
const Name = z.string().min(1).max(200);

export const AuditEntry = z
  .object({
    id: Uuid,
    createdAt: Timestamp.meta({ description: 'When the change committed (its transaction wrote the entry).' }),
    actor: z.object({
      type: ActorType,
      id: z.string().meta({ description: 'The API key id, the staff user id, `system`, or the CLI operator\'s OS user name.' }),
      label: z.string().meta({ description: "What a reader recognises: a key's name and prefix, a staff user's email, `user@host (CLI)`." }),
    }),
    operation: z.string().meta({ description: "The registry's operation name, e.g. `campaigns.update`.", example: 'campaigns.update' }),
    resourceType: z.string().meta({ description: 'The kind of resource changed, e.g. `campaign`.', example: 'campaign' }),
    resourceId: z.string().optional(),
    changes: z
      .object({
        before: z.unknown().optional().meta({ description: 'The resource before the change (updates and deletions).' }),
        after: z.unknown().optional().meta({ description: 'The resource after the change (creations and updates).' }),
      })
      .optional()
      .meta({ description: 'What changed; secrets (keys, webhook secrets, passwords, tokens) are never recorded.' }),
    requestId: z.string().meta({ description: "The X-Request-Id of the change's response." }),
    ip: z.string().optional().meta({ description: 'The client address the request came from.' }),
    userAgent: z.string().optional(),
  })
  .meta({ id: 'AuditEntry', description: 'One successful mutation, written in the transaction of the change. Entries never change.' });
export type AuditEntry = z.infer<typeof AuditEntry>;

export const ListAuditEntriesQuery = ListQuery.extend({
  operation: Name.optional().meta({ description: 'Only entries of this operation, e.g. `campaigns.update`.' }),
  resourceType: Name.optional().meta({ description: 'Only entries about this kind of resource, e.g. `campaign`.' }),
  resourceId: Name.optional().meta({ description: 'Only entries about this resource.' }),
  actorType: ActorType.optional().meta({ description: 'Only entries of this kind of actor.' }),
  actorId: Name.optional().meta({ description: 'Only entries of this actor (an API key id, a staff user id, `system`).' }),
  from: Timestamp.optional().meta({ description: 'Only entries created at or after this instant (inclusive).' }),
  to: Timestamp.optional().meta({ description: 'Only entries created before this instant (exclusive).' }),
}).refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) <= Date.parse(q.to), {
  message: 'from must not be after to',
  path: ['from'],
});
export type ListAuditEntriesQuery = z.infer<typeof ListAuditEntriesQuery>;
