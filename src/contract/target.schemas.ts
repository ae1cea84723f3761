// A Target names the order items a discount (or a rule condition) looks at: the items meeting every field given.
import { z } from 'zod';

const TargetValue = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);
const TargetMetadata = z
  .record(z.string().min(1).max(100), TargetValue)
  .refine((m) => Object.keys(m).length >= 1 && Object.keys(m).length <= 50, { message: 'between 1 and 50 keys' });

const Names = z.array(z.string().min(1).max(200)).min(1).max(1000);

export const Target = z
  .strictObject({
    productIds: Names.optional().meta({ description: 'Items whose productId is one of these.' }),
    skus: Names.optional().meta({ description: 'Items whose sku is one of these.' }),
    categories: Names.optional().meta({ description: 'Items with at least one of these categories.' }),
    collections: Names.optional().meta({ description: 'Items in at least one of these collections.' }),
    metadata: TargetMetadata.optional().meta({ description: 'Items whose metadata holds each of these keys with an equal value (strict: 1 is not "1").' }),
  })
  .refine((t) => Object.values(t).some((v) => v !== undefined), { message: 'a target names at least one of productIds, skus, categories, collections, metadata' })
  .meta({ id: 'Target', description: 'The order items that meet every field given: a list matches an item holding one of its values.' });
export type Target = z.infer<typeof Target>;
