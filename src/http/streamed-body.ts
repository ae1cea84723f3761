// The one exception to the JSON-only body rule: operations declaring `bodyStream` (bulk imports) take their body as a
// stream of CSV or NDJSON, up to their own limit, handed to the pipeline as a StreamedBody. A JSON body on the same
// route falls through to the regular JSON face.
import { Router, type RequestHandler } from 'express';
import typeis from 'type-is';
import type { BoundHandler } from '../contract/handler.js';
import { expressPath, StreamedBody, type Operation } from '../contract/operation.js';
import { ProblemError } from '../contract/problems.js';
import { charsetOf, hasRequestContent, isUtf8Charset, JSON_TYPES } from '../platform/http-request.js';
import type { OperationPipeline } from '../transports/execute-operation.js';
import { markOperation } from '../transports/request-observer.js';
import { actorOf, requestMetaOf } from '../transports/rest.js';
import { authenticate } from './authenticate.js';

function tooLarge(limit: number): ProblemError {
  return new ProblemError('payload_too_large', `the body is larger than ${limit} bytes (IMPORT_MAX_BYTES)`);
}

/** The request's bytes, refused with 413 once they pass `limit`; a body cut off by the client is a 400, not a 500. */
async function* limited(source: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let size = 0;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    throw new ProblemError('invalid_request', `the body could not be read: ${(error as Error).message}`);
  }
}

/** Checks before anything is read or anyone is authenticated: the media type, its charset, the declared length. */
function admitStream(operation: Operation, maxBytes: number): RequestHandler {
  const mediaTypes = [...operation.bodyStream!.mediaTypes];
  return (req, res, next) => {
    if (!hasRequestContent(req) || typeis(req, JSON_TYPES)) {
      next('route');
      return;
    }
    const fail = (error: ProblemError) => {
      // The body stays unread: the connection cannot carry another request.
      res.setHeader('Connection', 'close');
      next(error);
    };
    if (!typeis(req, mediaTypes)) return fail(new ProblemError('unsupported_media_type', `send the body as ${[...mediaTypes, 'application/json'].join(', ')}`));
    const charset = charsetOf(req);
    if (!isUtf8Charset(charset)) {
      return fail(new ProblemError('unsupported_media_type', `send the body as UTF-8 (charset=utf-8), not ${charset.slice(0, 40)}`));
    }
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) return fail(tooLarge(maxBytes));
    next();
  };
}

function runStreamed(pipeline: OperationPipeline, bound: BoundHandler, maxBytes: number): RequestHandler {
  const { field, mediaTypes } = bound.operation.bodyStream!;
  return async (req, res, next) => {
    markOperation(res, bound.operation.name);
    const mediaType = typeis(req, [...mediaTypes]) || mediaTypes[0]!;
    const body = new StreamedBody(mediaType, limited(req, maxBytes));
    try {
      const parts = { params: req.params, query: req.query, body: { [field]: body } };
      const { status, body: output } = await pipeline.execute(bound, actorOf(res), { kind: 'parts', parts }, requestMetaOf(req), req.log);
      res.status(status).json(output);
    } catch (error) {
      if (!req.complete) res.setHeader('Connection', 'close');
      next(error);
    }
  };
}

/** The routes of every streamed-body operation, mounted under /api/v1 before the JSON face. */
export function streamedBodyRoutes(pipeline: OperationPipeline, options: { maxBytes: number }): Router {
  const router = Router();
  for (const bound of pipeline.handlers) {
    const { operation } = bound;
    if (!operation.bodyStream || operation.method === 'get') continue;
    router[operation.method](
      expressPath(operation.path),
      admitStream(operation, options.maxBytes),
      authenticate((caller) => pipeline.admit(caller)),
      runStreamed(pipeline, bound, options.maxBytes),
    );
  }
  return router;
}

/** The document says what REST takes: the streamed media types next to the JSON body. */
export function describeStreamedBodies(document: { paths?: Record<string, unknown> }, operations: readonly Operation[], prefix: string): void {
  for (const operation of operations) {
    if (!operation.bodyStream) continue;
    const item = (document.paths?.[prefix + operation.path] ?? {}) as Record<string, { requestBody?: { content?: Record<string, unknown> } }>;
    const content = item[operation.method]?.requestBody?.content;
    if (!content) continue;
    const streamed = Object.fromEntries(
      operation.bodyStream.mediaTypes.map((type) => [type, { schema: { type: 'string', description: `The \`${operation.bodyStream!.field}\`, streamed (UTF-8).` } }]),
    );
    item[operation.method]!.requestBody!.content = { ...streamed, ...content };
  }
}
