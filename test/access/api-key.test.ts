import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

describe('api keys: happy path', () => {
  it('creates a key shown once, lists it without the secret, and the key works', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/api-keys', { name: 'checkout', scopes: ['vouchers:read'] });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^service_[A-Za-z0-9]{12}_[A-Za-z0-9]{40}$/);
    expect(created.body.key.split('_')[1]).toBe(created.body.prefix);
    const list = await api.get('/api/v1/api-keys');
    expect(list.status).toBe(200);
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toMatchObject({ name: 'checkout', scopes: ['vouchers:read'], prefix: created.body.prefix });
    expect(JSON.stringify(list.body)).not.toContain(created.body.key.split('_')[2]);
  });
});
