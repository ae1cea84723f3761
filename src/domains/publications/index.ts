// The publications domain's public surface.
export { publicationContract } from './publication.contract.js';
export { publicationHandlers } from './publication.handlers.js';
export { Publication } from './publication.schemas.js';
