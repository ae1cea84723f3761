// Workspace settings over real HTTP and a real PostgreSQL: name, stack limit, time zone, rate limit and the default
// currency, each change audited and announced (workspace.updated) in its transaction.
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
    expect(res.body).toMatchObject({ id: workspaceId, stackLimit: 5, timeZone: 'UTC', defaultCurrency: null });
  });

  it('sets and changes the default currency, each change with its audit entry and workspace.updated event in one transaction', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const set = await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: workspaceId, defaultCurrency: 'EUR', timeZone: 'UTC' });
    expect((await api.get('/api/v1/workspace')).body).toEqual(set.body);
    const changed = await api.patch('/api/v1/workspace', { defaultCurrency: 'USD', name: 'Acme US' });
    expect(changed.body).toMatchObject({ name: 'Acme US', defaultCurrency: 'USD' });
    expect((await api.patch('/api/v1/workspace', { name: 'Acme' })).body.defaultCurrency).toBe('USD');

    const { rows: entries } = await service.pool.query(
      `SELECT changes, created_at, xmin::text AS tx FROM audit_entries WHERE workspace_id = $1 AND operation = 'workspaces.update' ORDER BY created_at`,
      [workspaceId],
    );
    expect(entries.map((e) => [e.changes.before.defaultCurrency, e.changes.after.defaultCurrency])).toEqual([[null, 'EUR'], ['EUR', 'USD'], ['USD', 'USD']]);
    const { rows: events } = await service.pool.query(
      `SELECT payload, xmin::text AS tx FROM events WHERE workspace_id = $1 AND type = 'workspace.updated' ORDER BY created_at`,
      [workspaceId],
    );
    expect(events.map((e) => e.payload)).toEqual([
      { workspaceId, workspace: set.body },
      { workspaceId, workspace: changed.body },
      { workspaceId, workspace: expect.objectContaining({ name: 'Acme', defaultCurrency: 'USD' }) },
    ]);
    // Each event was written by the transaction that wrote its entry (the rows' xmin).
    expect(events.map((e) => e.tx)).toEqual(entries.map((e) => e.tx));
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
      [{ defaultCurrency: 'eur' }, 'body.defaultCurrency'],
      [{ defaultCurrency: 'EURO' }, 'body.defaultCurrency'],
      [{ defaultCurrency: 42 }, 'body.defaultCurrency'],
    ] as const) {
      const res = await api.patch('/api/v1/workspace', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await api.get('/api/v1/workspace')).body).toMatchObject({ stackLimit: 5, timeZone: 'UTC', defaultCurrency: null });
  });

  it('refuses to remove a default currency once set (campaigns may rely on it), changing nothing', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    const removed = await api.patch('/api/v1/workspace', { defaultCurrency: null, name: 'Renamed' });
    expect(removed.status).toBe(400);
    expect(removed.body.errors.map((e: { path: string }) => e.path)).toContain('body.defaultCurrency');
    expect((await api.get('/api/v1/workspace')).body).toMatchObject({ defaultCurrency: 'EUR', name: expect.not.stringMatching('Renamed') });
    const { rows } = await service.pool.query(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type = 'workspace.updated'`, [workspaceId]);
    expect(rows[0].n).toBe(1);
  });
});

describe('workspace settings: security', () => {
  it('needs workspaces:write to update; workspaces:read only reads', async () => {
    const { api } = await service.newWorkspace(['workspaces:read']);
    const res = await api.patch('/api/v1/workspace', { timeZone: 'Europe/Paris' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect((await api.get('/api/v1/workspace')).body.timeZone).toBe('UTC');
    expect((await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' })).status).toBe(403);
    expect((await api.get('/api/v1/workspace')).body.defaultCurrency).toBeNull();
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
