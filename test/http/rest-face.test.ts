// The REST face (OpenAPI document and request validation) built once and shared by the apps of the same operations.
import { afterAll, describe, expect, it } from 'vitest';
import { buildRestFace, restFaceFits } from '../../src/http/rest-face.js';
import { startTestService, type TestService } from '../support/service.js';
import { boundHandlers } from '../../src/transports/handler-registry.js';

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
});
