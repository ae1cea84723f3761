// Segment resources: STATIC lists of customers, or AUTO condition trees over customer.* fields kept current.
import { z } from 'zod';
import { ListQuery, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { conditionLeaves, ConditionTree, METADATA_FIELD } from '../../contract/condition.schemas.js';

export const SegmentType = z.enum(['STATIC', 'AUTO']).meta({ id: 'SegmentType' });
export type SegmentType = z.infer<typeof SegmentType>;

// customer.segments would make segments depend on each other, and customer.redemptions depends on a voucher.
const SEGMENT_FIELDS = ['customer.id', 'customer.sourceId', 'customer.email', 'customer.name', 'customer.createdAt'];

function isSegmentField(field: string): boolean {
  return SEGMENT_FIELDS.includes(field) || (field.startsWith('customer.metadata.') && METADATA_FIELD.test(field));
}

/** A condition tree whose leaves look only at the customer's own fields. */
export const SegmentConditions = ConditionTree.superRefine((tree, ctx) => {
  for (const { leaf, path } of conditionLeaves(tree)) {
    if (typeof leaf.field !== 'string' || isSegmentField(leaf.field)) continue;
    ctx.addIssue({
      code: 'custom',
      message: `a segment looks only at ${SEGMENT_FIELDS.join(', ')} and customer.metadata.<key>, not ${leaf.field}`,
      path: [...path.split('/').slice(1).map((step) => (/^\d+$/.test(step) ? Number(step) : step)), 'field'],
    });
  }
}).meta({ description: 'For AUTO segments: a condition tree over customer.id, sourceId, email, name, createdAt and customer.metadata.<key>.' });

export const Segment = z
  .object({
    id: Uuid,
    name: z.string().trim().min(1).max(200),
    type: SegmentType,
    conditions: ConditionTree.nullable().meta({ description: 'The tree of an AUTO segment; null for STATIC.' }),
    size: z.number().int().min(0).optional().meta({ description: 'Members now; in the answers of get, create, update and member changes.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Segment', description: 'A group of customers: a STATIC list, or AUTO, every customer its conditions hold for.' });
export type Segment = z.infer<typeof Segment>;

const CustomerIds = z.array(Uuid).min(1).max(1000).meta({ description: '1..1000 customer ids of this workspace.' });

export const CreateSegmentBody = z
  .object({
    name: Segment.shape.name,
    type: SegmentType,
    conditions: SegmentConditions.optional().meta({ description: 'Required for AUTO, refused for STATIC.' }),
    customerIds: CustomerIds.optional().meta({ description: 'STATIC only: the first members.' }),
  })
  .superRefine((body, ctx) => {
    if (body.type === 'AUTO' && body.conditions === undefined) ctx.addIssue({ code: 'custom', message: 'an AUTO segment needs conditions', path: ['conditions'] });
    if (body.type === 'STATIC' && body.conditions !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'a STATIC segment has no conditions: add members instead', path: ['conditions'] });
    }
    if (body.type === 'AUTO' && body.customerIds !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'the members of an AUTO segment follow its conditions', path: ['customerIds'] });
    }
  });
export type CreateSegmentBody = z.infer<typeof CreateSegmentBody>;

export const UpdateSegmentBody = z.object({
  name: Segment.shape.name.optional(),
  conditions: SegmentConditions.optional().meta({ description: 'AUTO only: the new tree; the members are computed again.' }),
});
export type UpdateSegmentBody = z.infer<typeof UpdateSegmentBody>;

export const SegmentMembersBody = z.object({ customerIds: CustomerIds });
export type SegmentMembersBody = z.infer<typeof SegmentMembersBody>;

export const SegmentMember = z
  .object({
    customerId: Uuid,
    sourceId: z.string().nullable(),
    email: z.string().nullable(),
    name: z.string().nullable(),
    addedAt: Timestamp.meta({ description: 'When the customer entered the segment.' }),
  })
  .meta({ id: 'SegmentMember' });
export type SegmentMember = z.infer<typeof SegmentMember>;

export const ListSegmentsQuery = ListQuery;
export type ListSegmentsQuery = z.infer<typeof ListSegmentsQuery>;
