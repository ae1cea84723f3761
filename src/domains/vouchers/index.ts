// The vouchers domain's public surface.
export { voucherContract } from './voucher.contract.js';
export { voucherHandlers } from './voucher.handlers.js';
export { findVoucherByCode, insertGiftCredits, insertVoucher } from './voucher.queries.js';
export { codeSpecProblem, generateCode, resolveCodeSpec } from './voucher-code-generator.js';
export { Voucher } from './voucher.schemas.js';
