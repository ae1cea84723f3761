// The orders domain's public surface.
export { orderContract } from './order.contract.js';
export { orderHandlers } from './order.handlers.js';
export { ORDER_STATUS_MOVES, OrderStatus, StoredOrder } from './order.schemas.js';
// For order returns (orchestration/): a cancel returns the order whole first, then moves it.
export { changeOrder } from './order.service.js';
