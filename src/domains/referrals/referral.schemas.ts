// Referral resources: a referrer's code (a voucher of the program) with its conversion counts, and conversions with
// the rewards each side gets (outcomes).
import { z } from 'zod';
import { CustomerReference, ListQuery, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { VoucherCode } from '../../contract/common.schemas.js';

export const ReferralCode = z
  .object({
    code: z.string(),
    programId: Uuid,
    referrerCustomerId: Uuid,
    conversions: z.object({ pending: z.number().int(), confirmed: z.number().int(), reverted: z.number().int() }),
    createdAt: Timestamp,
  })
  .meta({ id: 'ReferralCode' });
export type ReferralCode = z.infer<typeof ReferralCode>;

export const CreateReferralCodeBody = z.object({
  customer: CustomerReference.meta({ description: 'The referrer (an unknown sourceId is created).' }),
  code: VoucherCode.optional().meta({ description: 'The code to give the referrer; generated when left out.' }),
});

export const ConversionStatus = z.enum(['PENDING', 'CONFIRMED', 'REVERTED']);

export const ReferralOutcome = z.object({
  side: z.enum(['REFERRER', 'REFEREE']),
  rewardId: Uuid,
  status: z.enum(['PENDING', 'GRANTED', 'REVERTED', 'FAILED']),
  issued: z.record(z.string(), z.unknown()).optional().meta({ description: 'What was issued: voucherCode, amount or points.' }),
});

export const Conversion = z
  .object({
    id: Uuid,
    programId: Uuid,
    code: z.string(),
    referrerCustomerId: Uuid,
    refereeCustomerId: Uuid,
    orderId: z.string().optional(),
    redemptionId: Uuid.optional(),
    status: ConversionStatus,
    outcomes: z.array(ReferralOutcome),
    createdAt: Timestamp,
  })
  .meta({ id: 'ReferralConversion' });
export type Conversion = z.infer<typeof Conversion>;

export const ConversionListQuery = ListQuery.extend({ status: ConversionStatus.optional() });
