// Voucher operations, bulk generation included.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { GeneratedVouchers, GenerateVouchersBody, UpdateVoucherBody, Voucher, VoucherCodeParams, VoucherListQuery } from './voucher.schemas.js';
import { CreateVoucherBody } from '../../contract/voucher-template.schemas.js';

const tags = ['Vouchers'];

export const voucherContract = {
  createVoucher: defineOperation({
    name: 'vouchers.create',
    method: 'post',
    path: '/vouchers',
    scope: 'vouchers:write',
    summary: 'Create a voucher',
    description:
      'Fields left out are copied from the campaign’s voucher template. Without a code, one is generated from the ' +
      'template’s codeConfig. A gift card starts with a CREDITS_ADDED ledger entry of its amount. A taken code is 409. ' +
      '`validationRuleIds` must name rules of the workspace (400 naming the missing ones).',
    tags,
    body: CreateVoucherBody,
    output: Voucher,
    successStatus: 201,
  }),
  listVouchers: defineOperation({
    name: 'vouchers.list',
    method: 'get',
    path: '/vouchers',
    scope: 'vouchers:read',
    summary: 'List vouchers, newest first',
    tags,
    query: VoucherListQuery,
    output: listEnvelope(Voucher, 'VoucherList'),
  }),
  getVoucher: defineOperation({
    name: 'vouchers.get',
    method: 'get',
    path: '/vouchers/{code}',
    scope: 'vouchers:read',
    summary: 'Get a voucher by code',
    tags,
    params: VoucherCodeParams,
    output: Voucher,
  }),
  updateVoucher: defineOperation({
    name: 'vouchers.update',
    method: 'patch',
    path: '/vouchers/{code}',
    scope: 'vouchers:write',
    summary: 'Update a voucher’s settings',
    description:
      'Code, type and gift balance cannot change here. A redemptionLimit below the redemptions already made is 409; ' +
      'a discount only fits DISCOUNT vouchers. A new `schedule` replaces the previous one whole; null removes it.',
    tags,
    params: VoucherCodeParams,
    body: UpdateVoucherBody,
    output: Voucher,
  }),
  disableVoucher: defineOperation({
    name: 'vouchers.disable',
    method: 'post',
    path: '/vouchers/{code}/disable',
    scope: 'vouchers:write',
    summary: 'Disable a voucher; validation answers voucher_disabled',
    tags,
    params: VoucherCodeParams,
    output: Voucher,
  }),
  enableVoucher: defineOperation({
    name: 'vouchers.enable',
    method: 'post',
    path: '/vouchers/{code}/enable',
    scope: 'vouchers:write',
    summary: 'Enable a voucher',
    tags,
    params: VoucherCodeParams,
    output: Voucher,
  }),
  deleteVoucher: defineOperation({
    name: 'vouchers.delete',
    method: 'delete',
    path: '/vouchers/{code}',
    scope: 'vouchers:write',
    summary: 'Delete a voucher and its gift ledger',
    tags,
    params: VoucherCodeParams,
  }),
  generateVouchers: defineOperation({
    name: 'vouchers.generate',
    method: 'post',
    path: '/campaigns/{id}/vouchers/generate',
    scope: 'vouchers:write',
    summary: 'Generate vouchers in bulk for a campaign',
    description:
      'Creates `count` vouchers with unique random codes in one transaction, each a copy of the campaign’s voucher ' +
      'template. The code space (charset ^ random positions) must hold at least twice `count`.',
    tags,
    params: z.object({ id: Uuid }),
    body: GenerateVouchersBody,
    output: GeneratedVouchers,
    successStatus: 201,
  }),
};
