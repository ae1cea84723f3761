// Customer resources: the resource, its create/update bodies and the list filters, all derived from `Customer`.
import { z } from 'zod';
import { ListQuery, Metadata, Timestamp, Uuid } from '../../contract/common.schemas.js';

export const Customer = z
  .object({
    id: Uuid,
    sourceId: z
      .string()
      .min(1)
      .max(200)
      .nullable()
      .meta({ description: "The caller's own customer id, unique per workspace." }),
    email: z.email().max(320).nullable(),
    name: z.string().max(200).nullable(),
    metadata: Metadata,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Customer' });
export type Customer = z.infer<typeof Customer>;

const CustomerFields = Customer.pick({ sourceId: true, email: true, name: true, metadata: true });

export const CreateCustomerBody = CustomerFields.partial();
export type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;

/** Fields left out stay as they are; `null` clears sourceId, email or name; metadata is replaced as a whole. */
export const UpdateCustomerBody = CustomerFields.partial();
export type UpdateCustomerBody = z.infer<typeof UpdateCustomerBody>;

export const ListCustomersQuery = ListQuery.extend({
  sourceId: z.string().min(1).max(200).optional().meta({ description: 'Only the customer with this sourceId (exact).' }),
  email: z.string().min(1).max(320).optional().meta({ description: 'Only customers with this email, compared case-insensitively.' }),
});
export type ListCustomersQuery = z.infer<typeof ListCustomersQuery>;
