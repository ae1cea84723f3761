// Request validation by express-openapi-validator against the very document served at /api/openapi.json.
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';

export function requestValidator(document: object): RequestHandler[] {
  // The validator dereferences and annotates the document it is given: hand it a copy.
  const apiSpec = structuredClone(document) as never;
  return OpenApiValidator.middleware({
    apiSpec,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
    validateResponses: false,
    validateSecurity: false,
    validateApiSpec: true,
    ignoreUndocumented: false,
    $refParser: { mode: 'dereference' },
  }) as RequestHandler[];
}
