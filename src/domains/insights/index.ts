// The insights domain's public surface: its contract and handlers (read-only aggregates of a workspace), and the
// short answer cache the composition hands them through ServiceDeps.
export { insightContract } from './insight.contract.js';
export { insightHandlers } from './insight.handlers.js';
export { InsightCache } from './insight-cache.js';
