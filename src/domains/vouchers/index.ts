// The vouchers domain's public surface.
export { voucherContract } from './voucher.contract.js';
export { voucherHandlers } from './voucher.handlers.js';
export { findVoucherByCode } from './voucher.queries.js';
export { Discount } from './discount.schemas.js';
export { Voucher, VoucherCode, VoucherTemplate, type VoucherType } from './voucher.schemas.js';
