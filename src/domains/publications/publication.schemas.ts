// Publication resources: a campaign's code given to one customer, the publish body and the list filters.
import { z } from 'zod';
import { CustomerReference, ListQuery, Metadata, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { VoucherCode } from '../../contract/common.schemas.js';

export const Publication = z
  .object({
    id: Uuid,
    campaignId: Uuid,
    customerId: Uuid,
    voucher: z.object({ id: Uuid, code: VoucherCode }).meta({ description: 'The code given; only this customer may redeem it.' }),
    metadata: Metadata,
    createdAt: Timestamp,
  })
  .meta({ id: 'Publication', description: "One of a campaign's codes, assigned to a customer." });
export type Publication = z.infer<typeof Publication>;

export const PublicationResult = Publication.extend({
  existing: z
    .boolean()
    .meta({ description: 'True when a once-per-customer campaign had given this customer a code already: that one is returned.' }),
}).meta({ id: 'PublicationResult' });
export type PublicationResult = z.infer<typeof PublicationResult>;

export const CreatePublicationBody = z.object({
  campaignId: Uuid,
  customer: CustomerReference,
  metadata: Metadata.optional(),
});
export type CreatePublicationBody = z.infer<typeof CreatePublicationBody>;

export const ListPublicationsQuery = ListQuery.extend({
  campaignId: Uuid.optional(),
  customerId: Uuid.optional(),
});
export type ListPublicationsQuery = z.infer<typeof ListPublicationsQuery>;
