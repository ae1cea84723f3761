// The `referral` settings of a REFERRAL_PROGRAM campaign: when a conversion counts, who may be referred, the cap per
// referrer, and the rewards of each side (from the rewards catalog).
import { z } from 'zod';
import { Uuid } from '../../contract/common.schemas.js';

export const ReferralSettings = z
  .object({
    confirmOn: z
      .enum(['REDEMPTION', 'ORDER_PAID'])
      .default('ORDER_PAID')
      .meta({ description: 'A conversion is confirmed (and its rewards granted) at the redemption, or when its order is paid.' }),
    refereeMustBeNew: z.boolean().default(true).meta({ description: 'A referee with a paid order is refused (`referee_not_new`).' }),
    maxConversionsPerReferrer: z
      .number()
      .int()
      .min(1)
      .max(1_000_000_000)
      .optional()
      .meta({ description: 'Conversions of one referrer\'s code at most (`referrer_limit_reached`); its redemption limit.' }),
    referrerRewards: z
      .array(z.object({ rewardId: Uuid }))
      .max(10)
      .meta({ description: 'What the referrer is granted for each confirmed conversion (programs made before it was required may have none).' }),
    refereeRewardId: Uuid.optional(),
  })
  .meta({ id: 'ReferralSettings' });
export type ReferralSettings = z.infer<typeof ReferralSettings>;

/** The settings as a request gives them (create, or a PATCH that replaces them): at least one referrer reward. */
export const ReferralSettingsBody = ReferralSettings.extend({
  referrerRewards: z
    .array(z.object({ rewardId: Uuid }))
    .min(1)
    .max(10)
    .meta({ description: 'Required: what the referrer is granted for each confirmed conversion, 1..10 rewards of the catalog.' }),
}).meta({ id: 'ReferralSettingsBody' });
