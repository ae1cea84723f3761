// The vouchers domain's public surface.
export { voucherContract } from './voucher.contract.js';
export { voucherHandlers } from './voucher.handlers.js';
export { findVoucherByCode, insertGiftCredits, insertVoucher } from './voucher.queries.js';
export { codeSpecProblem, generateCode, resolveCodeSpec } from './voucher-code-generator.js';
export { applyVoucherTemplate } from '../../checkout/voucher-template.rules.js';
export { Discount } from '../../contract/discount.schemas.js';
export { Voucher, VoucherCode, VoucherTemplate, type VoucherType } from './voucher.schemas.js';
