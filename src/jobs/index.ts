// The jobs area's public surface for the web process: worker liveness for /ready.
export { countLiveWorkers, HEARTBEAT_STALE_SECONDS } from './worker-heartbeat.queries.js';
