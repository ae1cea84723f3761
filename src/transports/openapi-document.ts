// Builds the OpenAPI 3.1 document from the registry once at boot: routes, scopes, schemas, problem responses.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { Problem } from '../contract/common.schemas.js';
import type { Operation } from '../contract/operation.js';
import { NO_SCOPE } from '../contract/scopes.js';
import { projectRoot } from '../platform/paths.js';
import { MCP_PATH } from './mcp-http.js';
import { rpcPathItems } from './rpc.js';

export const API_PREFIX = '/api/v1';

/**
 * `info.license` and `info.contact` from package.json, the one place they are stated: `license` (an SPDX identifier,
 * or npm's `UNLICENSED` for a proprietary package) and `author` (a string or `{ name, email?, url? }`).
 */
function aboutThePackage(): { license: { name: string; identifier?: string }; contact: { name: string; email?: string; url?: string } } {
  const manifest = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { license?: string; author?: unknown };
  const license = manifest.license ?? 'UNLICENSED';
  const author = manifest.author;
  const contact =
    typeof author === 'object' && author !== null && typeof (author as { name?: unknown }).name === 'string'
      ? (author as { name: string; email?: string; url?: string })
      : { name: typeof author === 'string' && author ? author : 'The maintainers of the promotions service' };
  return {
    license: license === 'UNLICENSED' ? { name: 'Proprietary (UNLICENSED): no licence is granted' } : { name: license, identifier: license },
    contact: { name: contact.name, ...(contact.email ? { email: contact.email } : {}), ...(contact.url ? { url: contact.url } : {}) },
  };
}

const IdempotencyKeyHeader = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Alternative to the body field `idempotencyKey`.' }),
});

function problemResponse(description: string) {
  return { description, content: { 'application/problem+json': { schema: Problem } } };
}

function responsesOf(operation: Operation) {
  const success = operation.output
    ? { description: 'Success', content: { 'application/json': { schema: operation.output } } }
    : { description: 'Done; no body' };
  return {
    [String(operation.successStatus)]: success,
    ...(operation.existingStatus ? { [String(operation.existingStatus)]: { ...success, description: 'Found as it was asked for before: nothing changed' } } : {}),
    '400': problemResponse('Malformed input (`invalid_request`)'),
    '401': problemResponse('Missing, unknown or revoked API key (`unauthorized`)'),
    '403': problemResponse(`The key lacks the \`${operation.scope}\` scope (\`forbidden\`)`),
    ...(operation.params ? { '404': problemResponse('No such resource in this workspace (`not_found`)') } : {}),
    ...(operation.method !== 'get' ? { '409': problemResponse('Conflict (`conflict`, `idempotency_conflict`)') } : {}),
    ...(operation.body
      ? {
          '413': problemResponse('Body larger than the limit (`payload_too_large`)'),
          '415': problemResponse('Body is not application/json (`unsupported_media_type`)'),
        }
      : {}),
    ...(operation.scope === NO_SCOPE
      ? {}
      : {
          '429': {
            ...problemResponse('The key (or, without a valid key, the client address) has used its rate limit (`rate_limited`)'),
            headers: {
              'Retry-After': { description: 'Seconds until a request is admitted again.', schema: { type: 'integer', minimum: 0 } },
              RateLimit: { description: 'What is left: `"key";r=<left>;t=<seconds until full>` (IETF HTTPAPI draft).', schema: { type: 'string' } },
              'RateLimit-Policy': { description: 'The limit: `"key";q=<burst>;w=<seconds>`.', schema: { type: 'string' } },
            },
          },
        }),
    '500': problemResponse('Internal error (`internal_error`); never carries a stack'),
  };
}

export function buildOpenApiDocument(operations: readonly Operation[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = API_PREFIX + op.path;
    paths[path] ??= {};
    paths[path][op.method] = {
      operationId: op.name,
      summary: op.summary,
      description: [op.description, op.scope === NO_SCOPE ? 'No key needed.' : `Required scope: \`${op.scope}\`.`].filter(Boolean).join('\n\n'),
      tags: op.tags,
      // Signing in and accepting an invitation need no key (a staff session cookie may still be sent).
      security: op.scope === NO_SCOPE ? [] : [{ apiKey: [] }],
      'x-required-scope': op.scope,
      requestParams: {
        ...(op.params ? { path: op.params } : {}),
        ...(op.query ? { query: op.query } : {}),
        ...(op.idempotent ? { header: IdempotencyKeyHeader } : {}),
      },
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: op.body } } } } : {}),
      responses: responsesOf(op),
    };
  }
  Object.assign(paths, rpcPathItems(operations.map((op) => op.name), Problem, MCP_PATH, version), probePathItems());
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Promotions service',
      version,
      description:
        'Campaigns, vouchers, gift cards, redemptions, customers and webhooks. Money is in integer minor units. ' +
        'Business decisions are answered 200 as outcomes discriminated on `ok` (or `valid`): a refusal carries its `code`.',
      ...aboutThePackage(),
    },
    servers: [{ url: '/' }],
    // Resource groups in the order the registry (and the README) presents them.
    tags: [...new Set([...operations.flatMap((op) => op.tags ?? []), 'Health', 'RPC', 'MCP'])].map((name) => ({ name })),
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `service_<12 chars>_<40 chars>`.' },
      },
    },
    paths: paths as never,
  });
  allowReservedQueryCharacters(document);
  return document;
}

const Health = z.object({ status: z.literal('ok'), version: z.string() }).meta({ id: 'Health' });
const Readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    failing: z.array(z.string()).optional().meta({ description: 'The checks that failed (503 only).' }),
    checks: z.record(z.string(), z.looseObject({ status: z.enum(['ok', 'failing']), detail: z.string().optional() })),
    version: z.string(),
  })
  .meta({ id: 'Readiness' });

/** The probes a load balancer or an operator calls: no key, at the root and under /api/v1. */
function probePathItems(): Record<string, Record<string, unknown>> {
  const items: Record<string, Record<string, unknown>> = {};
  for (const prefix of ['', API_PREFIX]) {
    const twin = prefix ? 'Api' : '';
    items[`${prefix}/health`] = {
      get: {
        operationId: `health${twin}`,
        summary: 'Liveness: 200 while the process lives',
        tags: ['Health'],
        security: [],
        responses: { '200': { description: 'Alive', content: { 'application/json': { schema: Health } } } },
      },
    };
    items[`${prefix}/ready`] = {
      get: {
        operationId: `ready${twin}`,
        summary: 'Readiness: database, migrations, worker and engine partitions',
        tags: ['Health'],
        security: [],
        responses: {
          '200': { description: 'Ready', content: { 'application/json': { schema: Readiness } } },
          '503': { description: 'Not ready; `failing` names the checks', content: { 'application/json': { schema: Readiness } } },
        },
      },
    };
  }
  return items;
}

/** Query values may carry `@`, `:` or `/` unencoded (an email filter typed into curl), as RFC 3986 allows. */
function allowReservedQueryCharacters(document: ReturnType<typeof createDocument>): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, { parameters?: Array<Record<string, unknown>> }>)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query') parameter.allowReserved = true;
      }
    }
  }
}
