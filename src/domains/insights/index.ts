// The insights domain's public surface: its contract and handlers (read-only aggregates of a workspace).
export { insightContract } from './insight.contract.js';
export { insightHandlers } from './insight.handlers.js';
