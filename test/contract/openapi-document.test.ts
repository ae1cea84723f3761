import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/registry.js';
import { ALL_SCOPES, NO_SCOPE } from '../../src/contract/scopes.js';
import { packageVersion } from '../../src/platform/paths.js';
import { assertEveryOperationHandled } from '../../src/transports/handler-registry.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let document: any;
beforeAll(async () => {
  service = await startTestService();
  const res = await fetch(`${service.baseUrl}/api/openapi.json`);
  expect(res.status).toBe(200);
  document = await res.json();
});
afterAll(async () => service?.close());

describe('the served OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document according to an independent validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(document.info.version).toBe(packageVersion);
  });

  it('lists every registered operation at its path and method, with a unique operationId', () => {
    const ids = new Set<string>();
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.path}`]?.[op.method];
      expect(entry, `${op.method} ${op.path}`).toBeDefined();
      expect(entry.operationId).toBe(op.name);
      expect(ids.has(op.name)).toBe(false);
      ids.add(op.name);
    }
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/v1/') && !/\/(health|ready)$/.test(path))
      .flatMap(([, p]: [string, any]) => Object.keys(p));
    expect(documented).toHaveLength(operations.length);
  });

  it('names the scope, the security scheme, a summary and problem+json errors for each operation', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.path}`][op.method];
      expect(entry['x-required-scope']).toBe(op.scope);
      expect([...ALL_SCOPES, NO_SCOPE]).toContain(entry['x-required-scope']);
      expect(entry.description).toContain(op.scope === NO_SCOPE ? 'No key needed' : op.scope);
      expect(entry.summary).toBeTruthy();
      expect(entry.security).toEqual(op.scope === NO_SCOPE ? [] : [{ apiKey: [] }]);
      for (const status of ['400', '401', '403', '500']) {
        expect(entry.responses[status].content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
      }
      expect(entry.responses[String(op.successStatus)]).toBeDefined();
      const idempotencyHeader = (entry.parameters ?? []).find((p: any) => p.in === 'header' && p.name === 'idempotency-key');
      expect(Boolean(idempotencyHeader), op.name).toBe(Boolean(op.idempotent));
    }
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('lists its tags in the order of the resource groups, and the probes as public operations', async () => {
    const tags = document.tags.map((t: { name: string }) => t.name);
    // In the order the operations come (the resource groups), each once, the probes and the faces last.
    const used = [...new Set(Object.values(document.paths).flatMap((item: any) => Object.values(item).flatMap((op: any) => op.tags ?? [])))];
    expect(tags.length).toBe(new Set(tags).size);
    expect([...tags].sort()).toEqual([...used].sort());
    expect(tags.slice(-3)).toEqual(['Health', 'RPC', 'MCP']);
    expect(tags.slice(0, 4)).toEqual(['Workspaces', 'API keys', 'Campaigns', 'Vouchers']);
    for (const path of ['/health', '/ready', '/api/v1/health', '/api/v1/ready']) {
      const entry = document.paths[path]?.get;
      expect(entry, path).toBeDefined();
      expect(entry.security).toEqual([]);
      expect(entry.tags).toEqual(['Health']);
      const answered = await fetch(`${service.baseUrl}${path}`);
      expect(entry.responses[String(answered.status)], path).toBeDefined();
      const body = (await answered.json()) as Record<string, unknown>;
      const schema = entry.responses[String(answered.status)].content['application/json'].schema;
      const resolved = schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema;
      expect(Object.keys(body).filter((k) => !(k in resolved.properties)), path).toEqual([]);
    }
    // The RPC handshake header is declared as exactly the versions the server accepts.
    const header = document.paths['/api/rpc'].get.parameters.find((p: { name: string }) => p.name === 'x-client-version');
    const accepted = new RegExp(header.schema.pattern);
    expect(accepted.test(packageVersion)).toBe(true);
    const [major, minor] = packageVersion.split('.').map(Number) as [number, number];
    expect(accepted.test(`${major}.${minor + 1}.0`)).toBe(false);
    const conforming = await fetch(`${service.baseUrl}/api/rpc`, { headers: { authorization: `Bearer ${(await service.newWorkspace()).key}`, 'x-client-version': `${major}.${minor}.99` } });
    expect(conforming.status).toBe(200);
  });

  it('names a license and a contact in info', () => {
    expect(document.info.license.name).toBeTruthy();
    expect(document.info.contact.name).toBeTruthy();
  });

  it('answers business decisions as unions discriminated on ok / valid, a refusal always with its code', () => {
    const schemas = document.components.schemas;
    const decisions = {
      ValidationOutcome: 'valid',
      RedemptionOutcome: 'ok',
      StackOutcome: 'ok',
      RollbackOutcome: 'ok',
      LoyaltyPointsOutcome: 'ok',
      LoyaltyTransferOutcome: 'ok',
      RewardRedemptionOutcome: 'ok',
    };
    for (const [id, discriminator] of Object.entries(decisions)) {
      const union = schemas[id];
      expect(union.discriminator, id).toMatchObject({ propertyName: discriminator });
      expect(union.oneOf, id).toHaveLength(2);
      const members = union.oneOf.map((m: { $ref: string }) => schemas[m.$ref.split('/').pop()!]);
      const byValue = Object.fromEntries(members.map((m: any) => [String(m.properties[discriminator].const), m]));
      expect(Object.keys(byValue).sort(), id).toEqual(['false', 'true']);
      expect(union.discriminator.mapping, id).toEqual(
        Object.fromEntries(union.oneOf.map((m: { $ref: string }, i: number) => [String(members[i].properties[discriminator].const), m.$ref])),
      );
      expect(byValue['false'].required, id).toEqual(expect.arrayContaining([discriminator, 'code']));
      expect(byValue['false'].properties.code, id).toEqual({ $ref: '#/components/schemas/ExplanationCode' });
      expect(byValue['true'].properties.code, id).toBeUndefined();
    }
    const redeem = document.paths['/api/v1/vouchers/{code}/redemption'].post.responses['200'].content['application/json'].schema;
    expect(redeem).toEqual({ $ref: '#/components/schemas/RedemptionOutcome' });
    expect(schemas.RedemptionSucceeded.required).toContain('redemption');
  });

  it('has a handler for every operation and no handler without an operation', () => {
    expect(() => assertEveryOperationHandled()).not.toThrow();
  });
});
