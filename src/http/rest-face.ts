// The REST face's OpenAPI document and its request validation, built from a list of operations. Building them costs a
// few hundred ms of CPU, and the validator compiles each route's schemas on the route's first request (tens of ms
// each): a process that serves several apps of the same operations (the test harness starts a service per test file)
// builds one face and hands it to each app, which then shares the compiled routes too.
import type { RequestHandler } from 'express';
import type { Operation } from '../contract/operation.js';
import { API_PREFIX, buildOpenApiDocument } from '../transports/openapi-document.js';
import { requestValidator } from '../transports/request-validator.js';
import { describeStreamedBodies } from './streamed-body.js';

export interface RestFace {
  readonly operations: readonly Operation[];
  readonly version: string;
  /** Served at /api/openapi.json. */
  readonly document: object;
  /** express-openapi-validator's middleware for that document (stateless per request: shareable between apps). */
  readonly validator: readonly RequestHandler[];
}

export function buildRestFace(operations: readonly Operation[], version: string): RestFace {
  const document = buildOpenApiDocument(operations, version);
  describeStreamedBodies(document, operations, API_PREFIX);
  return { operations: [...operations], version, document, validator: requestValidator(document) };
}

/** Whether `face` was built for exactly these operations (the same objects, in the same order) and version. */
export function restFaceFits(face: RestFace, operations: readonly Operation[], version: string): boolean {
  return face.version === version && face.operations.length === operations.length && face.operations.every((op, i) => op === operations[i]);
}
