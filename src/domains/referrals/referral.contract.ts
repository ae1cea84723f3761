// Referral operations: a referrer's code, and the conversions of a program. Conversions happen at checkout (a referee
// redeeming the code, alone or in a stack): see the redemption operations.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { Conversion, ConversionListQuery, CreateReferralCodeBody, ReferralCode } from './referral.schemas.js';

const tags = ['Referrals'];
const params = z.object({ id: Uuid });

export const referralContract = {
  createCode: defineOperation({
    name: 'referrals.createCode',
    method: 'post',
    path: '/referrals/programs/{id}/codes',
    scope: 'referrals:write',
    summary: "Get a referrer's code in a referral program (created the first time)",
    description:
      "The code is a voucher of the program made from its voucher template (the referee's discount); its redemption limit is the program's `maxConversionsPerReferrer`. 201 with a new code (`referral.code.created`); the same referrer again: 200 with the same code. A given code in use: 409.",
    tags,
    params,
    body: CreateReferralCodeBody,
    output: ReferralCode,
    successStatus: 201,
    existingStatus: 200,
  }),
  getCode: defineOperation({
    name: 'referrals.getCode',
    method: 'get',
    path: '/referrals/codes/{code}',
    scope: 'referrals:read',
    summary: 'Get a referral code with its conversion counts',
    tags,
    params: z.object({ code: z.string().min(1).max(200) }),
    output: ReferralCode,
  }),
  listCustomerCodes: defineOperation({
    name: 'referrals.listCustomerCodes',
    method: 'get',
    path: '/customers/{id}/referrals',
    scope: 'referrals:read',
    summary: "A customer's referral codes, one per program",
    tags,
    params,
    output: z.object({ data: z.array(ReferralCode) }).meta({ id: 'CustomerReferralCodes' }),
  }),
  listConversions: defineOperation({
    name: 'referrals.listConversions',
    method: 'get',
    path: '/referrals/programs/{id}/conversions',
    scope: 'referrals:read',
    summary: 'List the conversions of a referral program, newest first',
    tags,
    params,
    query: ConversionListQuery,
    output: listEnvelope(Conversion, 'ReferralConversionList'),
  }),
  getConversion: defineOperation({
    name: 'referrals.getConversion',
    method: 'get',
    path: '/referrals/conversions/{id}',
    scope: 'referrals:read',
    summary: 'Get a referral conversion with the rewards of each side',
    tags,
    params,
    output: Conversion,
  }),
};
