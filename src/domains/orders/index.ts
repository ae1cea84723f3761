// The orders domain's public surface.
export { orderContract } from './order.contract.js';
export { orderHandlers } from './order.handlers.js';
export { OrderStatus, StoredOrder } from './order.schemas.js';
