// The REST face (OpenAPI document and request validation) built once and shared by the apps of the same operations.
import { afterAll, describe, expect, it } from 'vitest';
import { buildRestFace, restFaceFits } from '../../src/http/rest-face.js';
import { startTestService, type TestService } from '../support/service.js';
import { boundHandlers } from '../../src/transports/handler-registry.js';
import { z } from 'zod';
import { implement } from '../../src/contract/handler.js';
import { defineOperation } from '../../src/contract/operation.js';

/** One operation beyond the registry's: a service that has it is not served the registry's face. */
const echoHandlers = implement(
  {
    echo: defineOperation({
      name: 'throwaways.echo',
      method: 'post',
      path: '/throwaways/echo',
      scope: 'campaigns:read',
      summary: 'Echo a word (a test-only operation that changes nothing)',
      effect: 'read',
      tags: ['Throwaways'],
      body: z.object({ word: z.string().max(20) }),
      output: z.object({ word: z.string() }),
    }),
  },
  { echo: async ({ input }) => ({ word: input.word }) },
);

const services: TestService[] = [];
afterAll(async () => {
  for (const s of services) await s.close();
});

describe('a shared REST face', () => {
  it('fits only the operations and version it was built for', () => {
    const operations = boundHandlers.map((h) => h.operation);
    const face = buildRestFace(operations, '1.2.3');
    expect(restFaceFits(face, operations, '1.2.3')).toBe(true);
    expect(restFaceFits(face, operations, '1.2.4')).toBe(false);
    expect(restFaceFits(face, operations.slice(1), '1.2.3')).toBe(false);
    expect(restFaceFits(face, [...operations.slice(1), operations[0]!], '1.2.3')).toBe(false);
  });

  it('validates every app it is given to, each serving the same document', async () => {
    const first = await startTestService({ version: 'face-test' });
    services.push(first);
    const second = await startTestService({ version: 'face-test' });
    services.push(second);
    expect(second.service.restFace).toBe(first.service.restFace);
    for (const s of [first, second]) {
      const { api } = await s.newWorkspace();
      const bad = await api.post('/api/v1/campaigns', { name: 42, type: 'DISCOUNT_COUPONS' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ detail: 'the request does not match the API schema', errors: [{ path: 'body.name', message: 'must be string' }] });
      const ok = await api.post('/api/v1/campaigns', { name: 'face', type: 'DISCOUNT_COUPONS' });
      expect(ok.status).toBe(201);
      const doc = (await (await fetch(`${s.baseUrl}/api/openapi.json`)).json()) as { info: { version: string } };
      expect(doc.info.version).toBe('face-test');
    }
  });

  it('is not used by a service of other operations, which builds and serves its own', async () => {
    const shared = await startTestService({ version: 'face-test' });
    services.push(shared);
    const other = await startTestService({ version: 'face-test', extraHandlers: echoHandlers });
    services.push(other);
    expect(other.service.restFace).not.toBe(shared.service.restFace);
    const paths = async (s: TestService) => Object.keys(((await (await fetch(`${s.baseUrl}/api/openapi.json`)).json()) as { paths: object }).paths);
    expect(await paths(other)).toContain('/api/v1/throwaways/echo');
    expect(await paths(shared)).not.toContain('/api/v1/throwaways/echo');
    const { api } = await other.newWorkspace();
    expect((await api.post('/api/v1/throwaways/echo', { word: 42 })).status).toBe(400);
    expect(await api.post('/api/v1/throwaways/echo', { word: 'hi' })).toMatchObject({ status: 200, body: { word: 'hi' } });
  });
});
