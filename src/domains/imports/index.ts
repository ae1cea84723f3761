// The imports domain's public surface: bulk import of vouchers and customers (CSV, NDJSON) and the import job resource.
export { importContract } from './import.contract.js';
export { importHandlers } from './import.handlers.js';
export { Import } from './import.schemas.js';
