// Express's end of the error path: renders what the pipeline's one mapping (transports/error-mapping) makes of it.
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { invalidField, ProblemError } from '../contract/problems.js';
import { hasRequestContent } from '../platform/http-request.js';
import { problemOf } from '../transports/error-mapping.js';

export function sendProblem(res: Response, error: ProblemError): void {
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.status(error.status).type('application/problem+json').send(JSON.stringify(error.toBody()));
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ProblemError('not_found', `no route for ${req.method} ${req.path}`));
};

export const problemHandler: ErrorRequestHandler = (error, req, res, _next) => {
  let problem = problemOf(error, req.log);
  // The validator calls a missing body an unsupported media type; for the client it is a missing body.
  if (problem.code === 'unsupported_media_type' && !hasRequestContent(req)) {
    problem = invalidField('body', 'this operation needs a JSON body');
  }
  sendProblem(res, problem);
};
