import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

describe('workspace settings: happy path', () => {
  it('shows a new workspace in UTC with a stack limit of 5', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const res = await api.get('/api/v1/workspace');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: workspaceId, stackLimit: 5, timeZone: 'UTC' });
  });

  it('updates name, stack limit and time zone, and reads them back', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const updated = await api.patch('/api/v1/workspace', { name: 'Acme EU', stackLimit: 12, timeZone: 'Europe/Berlin' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: workspaceId, name: 'Acme EU', stackLimit: 12, timeZone: 'Europe/Berlin' });
    expect((await api.get('/api/v1/workspace')).body).toEqual(updated.body);
  });

  it('keeps the fields left out, and stores a zone in its canonical spelling', async () => {
    const { api } = await service.newWorkspace();
    await api.patch('/api/v1/workspace', { name: 'Named', stackLimit: 3 });
    const zoned = await api.patch('/api/v1/workspace', { timeZone: 'america/new_york' });
    expect(zoned.status).toBe(200);
    expect(zoned.body).toMatchObject({ name: 'Named', stackLimit: 3, timeZone: 'America/New_York' });
    const unchanged = await api.patch('/api/v1/workspace', {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(zoned.body);
  });

  it('tells the engine, and bumps the promotions version when a setting the decisions read changes', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const version = async () =>
      (await service.pool.query<{ v: number }>('SELECT promotions_version AS v FROM workspaces WHERE workspace_id = $1', [workspaceId])).rows[0]!.v;
    const spy = vi.spyOn(service.engine, 'rulesChanged');
    try {
      const before = await version();
      expect((await api.patch('/api/v1/workspace', { timeZone: 'Asia/Tokyo' })).status).toBe(200);
      expect(spy).toHaveBeenCalledWith(workspaceId);
      expect(await version()).toBe(before + 1);
      await api.patch('/api/v1/workspace', { name: 'Only the name' });
      expect(await version()).toBe(before + 1);
    } finally {
      spy.mockRestore();
    }
  });

  it('applies a new stack limit to stacks', async () => {
    const { api } = await service.newWorkspace();
    await api.patch('/api/v1/workspace', { stackLimit: 1 });
    for (const code of ['STACK-A', 'STACK-B']) {
      const created = await api.post('/api/v1/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
      expect(created.status).toBe(201);
    }
    const stack = await api.post('/api/v1/redemptions/stack', {
      vouchers: [{ code: 'STACK-A' }, { code: 'STACK-B' }],
      order: { amount: 1000, currency: 'EUR' },
      idempotencyKey: 'stack-limit-1',
    });
    expect(stack.status).toBe(200);
    expect(stack.body).toMatchObject({ ok: false, code: 'stack_limit_exceeded' });
  });
});

describe('workspace settings: errors', () => {
  it('refuses an unknown time zone and a stack limit out of 1..30, naming the fields', async () => {
    const { api } = await service.newWorkspace();
    for (const [body, path] of [
      [{ timeZone: 'Mars/Olympus_Mons' }, 'body.timeZone'],
      [{ timeZone: '' }, 'body.timeZone'],
      [{ stackLimit: 0 }, 'body.stackLimit'],
      [{ stackLimit: 31 }, 'body.stackLimit'],
      [{ stackLimit: 2.5 }, 'body.stackLimit'],
      [{ name: '' }, 'body.name'],
    ] as const) {
      const res = await api.patch('/api/v1/workspace', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await api.get('/api/v1/workspace')).body).toMatchObject({ stackLimit: 5, timeZone: 'UTC' });
  });
});

describe('workspace settings: security', () => {
  it('needs workspaces:write to update; workspaces:read only reads', async () => {
    const { api } = await service.newWorkspace(['workspaces:read']);
    const res = await api.patch('/api/v1/workspace', { timeZone: 'Europe/Paris' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect((await api.get('/api/v1/workspace')).body.timeZone).toBe('UTC');
  });

  it('lets a workspaces:write key change its own workspace only', async () => {
    const mine = await service.newWorkspace(['workspaces:write']);
    const other = await service.newWorkspace();
    expect((await mine.api.patch('/api/v1/workspace', { timeZone: 'Australia/Sydney' })).status).toBe(200);
    expect((await other.api.get('/api/v1/workspace')).body.timeZone).toBe('UTC');
  });

  it('answers 401 without a key', async () => {
    expect((await service.api().patch('/api/v1/workspace', { name: 'x' })).status).toBe(401);
  });
});
