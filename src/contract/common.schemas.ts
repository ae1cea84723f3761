// Shapes shared by every domain: ids, money, currency, timestamps, metadata, the list envelope, problems, orders.
import { z } from 'zod';
import { PROBLEM_CODES } from './problems.js';

export const Uuid = z.uuid().meta({ description: 'A UUID.', example: '0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31' });

export const Timestamp = z.iso
  .datetime({ offset: true })
  .meta({ description: 'ISO 8601 timestamp; responses are UTC.', example: '2026-11-21T10:00:00.000Z' });

export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three upper-case letters')
  .meta({ description: 'ISO 4217 currency code.', example: 'EUR' });

export const Money = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .meta({ description: 'An amount in minor units (cents), never a float.', example: 1999 });

const SAFE_LIMIT = `2^53-1 (${Number.MAX_SAFE_INTEGER})`;

/**
 * For a list of order lines (superRefine): each line total (quantity × price) and the sum of them stay within 2^53-1,
 * the largest amount a JSON number carries exactly.
 */
export function boundLineTotals(items: ReadonlyArray<{ quantity: number; price: number }>, ctx: z.RefinementCtx): void {
  let sum = 0;
  items.forEach((item, index) => {
    const line = item.quantity * item.price;
    sum += line;
    if (line > Number.MAX_SAFE_INTEGER) ctx.addIssue({ code: 'custom', path: [index], message: `quantity × price passes ${SAFE_LIMIT}` });
  });
  if (sum > Number.MAX_SAFE_INTEGER) ctx.addIssue({ code: 'custom', message: `the line totals add up past ${SAFE_LIMIT}` });
}

/** Free-form JSON (any field typed as an unknown value: metadata, ...) nests at most this deep; checked at the edge. */
export const MAX_FREE_FORM_DEPTH = 32;
/** ... and takes at most this many bytes as UTF-8 JSON text. */
export const MAX_FREE_FORM_BYTES = 65_536;

export const Metadata = z
  .record(z.string().max(100), z.unknown())
  .meta({
    description: `Free-form key/value data kept with the resource: at most ${MAX_FREE_FORM_DEPTH} levels deep and ${MAX_FREE_FORM_BYTES / 1024} KiB as JSON.`,
  });

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1..100.' }),
  cursor: z.string().min(1).max(2000).optional().meta({ description: 'Opaque cursor from a previous page (next or prev).' }),
});
export type ListQuery = z.infer<typeof ListQuery>;

export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item),
      next: z.string().optional().meta({ description: 'Cursor of the following page, when there is one.' }),
      prev: z.string().optional().meta({ description: 'Cursor of the preceding page, when there is one.' }),
    })
    .meta({ id, description: 'One page of a list, newest first.' });
}

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    code: z.enum(PROBLEM_CODES),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details.' });

export const CustomerReference = z
  .object({
    id: Uuid.optional(),
    sourceId: z.string().min(1).max(200).optional(),
    email: z.email().optional(),
    name: z.string().max(200).optional(),
    metadata: Metadata.optional(),
  })
  .meta({ id: 'CustomerReference', description: 'A customer by id or sourceId; an unknown sourceId is created.' });
export type CustomerReference = z.infer<typeof CustomerReference>;

/** The characters of a voucher code (and of a code generator's charset). */
export const CODE_CHARS = /^[A-Za-z0-9_.-]+$/;

export const VoucherCode = z
  .string()
  .min(1)
  .max(100)
  .regex(CODE_CHARS, 'only letters, digits, `_`, `.` and `-`')
  .meta({ description: 'A voucher code: 1..100 of `[A-Za-z0-9_.-]`, case-sensitive, unique per workspace.', example: 'SUMMER-7KQ2-M9XP' });
