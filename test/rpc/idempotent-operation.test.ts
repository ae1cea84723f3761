// A write operation that the contract marks idempotent gets the pipeline's idempotency with no handler code: replay,
// conflict, stored refusals and one execution under concurrency, on REST (body field or header) and RPC alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { implement, refuse } from '../../src/contract/handler.js';
import { defineOperation } from '../../src/contract/operation.js';
import { startTestService, type TestService } from '../support/service.js';

const noteContract = {
  addNote: defineOperation({
    name: 'throwaways.addNote',
    method: 'post',
    path: '/throwaways/{label}/notes',
    scope: 'campaigns:write',
    summary: 'Add a note (a test-only idempotent write)',
    tags: ['Throwaways'],
    params: z.object({ label: z.string().min(1).max(50) }),
    body: z.object({ text: z.string().max(200), idempotencyKey: z.string().min(1).max(200).optional() }),
    output: z.object({ ok: z.boolean(), label: z.string().optional(), text: z.string().optional(), run: z.number().optional() }).loose(),
    idempotent: true,
  }),
};

/** How many times the handler's unit of work ran: a replay must not run it again. */
const runs = { count: 0 };

const noteHandlers = implement(noteContract, {
  async addNote({ input, mutate }) {
    return mutate(async ({ tx, record }) => {
      runs.count += 1;
      const run = runs.count;
      await tx.query('SELECT pg_sleep(0.05)');
      if (input.text === 'refuse me') refuse('loyalty_points_insufficient', 'refused on purpose');
      record({ resourceType: 'throwaway_note', resourceId: input.label, after: { text: input.text } });
      return { ok: true, label: input.label, text: input.text, run };
    });
  },
});

let service: TestService;
let workspaceId: string;
let key: string;
beforeAll(async () => {
  service = await startTestService({ extraHandlers: noteHandlers });
  ({ workspaceId, key } = await service.newWorkspace());
});
afterAll(async () => service?.close());

async function post(label: string, body: Record<string, unknown>, idempotencyKey?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const res = await fetch(`${service.baseUrl}/api/v1/throwaways/${label}/notes`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function auditEntries(): Promise<number> {
  const { rows } = await service.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_entries WHERE workspace_id = $1 AND operation = 'throwaways.addNote'",
    [workspaceId],
  );
  return rows[0]!.n;
}

describe('an idempotent write operation with no idempotency code of its own', () => {
  it('answers the same request again from the stored reply, marked idempotent, with one execution and one audit entry', async () => {
    const before = { runs: runs.count, audit: await auditEntries() };
    const first = await post('a', { text: 'hello', idempotencyKey: 'k-1' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, label: 'a', text: 'hello', run: before.runs + 1 });
    const again = await post('a', { text: 'hello' }, 'k-1'); // the header names the same key
    expect(again).toEqual({ status: 200, body: { ...first.body, idempotent: true } });
    const rpc = await fetch(`${service.baseUrl}/api/rpc/throwaways.addNote`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'a', text: 'hello', idempotencyKey: 'k-1' }),
    });
    expect(await rpc.json()).toEqual({ ...first.body, idempotent: true });
    expect(runs.count).toBe(before.runs + 1);
    expect(await auditEntries()).toBe(before.audit + 1);
  });

  it('answers the same key with another body or another path 409 idempotency_conflict, changing nothing', async () => {
    await post('b', { text: 'one', idempotencyKey: 'k-2' });
    const before = { runs: runs.count, audit: await auditEntries() };
    const otherBody = await post('b', { text: 'two', idempotencyKey: 'k-2' });
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.code).toBe('idempotency_conflict');
    const otherPath = await post('c', { text: 'one', idempotencyKey: 'k-2' });
    expect(otherPath.status).toBe(409);
    expect(otherPath.body.code).toBe('idempotency_conflict');
    expect(runs.count).toBe(before.runs);
    expect(await auditEntries()).toBe(before.audit);
  });

  it('keeps a refusal under its key: answered again as a replay, with no audit entry', async () => {
    const before = await auditEntries();
    const refused = await post('d', { text: 'refuse me', idempotencyKey: 'k-3' });
    expect(refused).toEqual({ status: 200, body: { ok: false, code: 'loyalty_points_insufficient', message: 'refused on purpose' } });
    const runsAfterFirst = runs.count;
    const again = await post('d', { text: 'refuse me', idempotencyKey: 'k-3' });
    expect(again.body).toEqual({ ...refused.body, idempotent: true });
    expect(runs.count).toBe(runsAfterFirst);
    expect((await post('d', { text: 'other', idempotencyKey: 'k-3' })).status).toBe(409);
    expect(await auditEntries()).toBe(before);
  });

  it('runs once for concurrent requests with one key: the others replay its reply', async () => {
    const before = runs.count;
    const answers = await Promise.all(Array.from({ length: 6 }, () => post('e', { text: 'race', idempotencyKey: 'k-4' })));
    expect(runs.count).toBe(before + 1);
    expect(answers.every((a) => a.status === 200 && a.body.run === before + 1)).toBe(true);
    expect(answers.filter((a) => a.body.idempotent === true)).toHaveLength(5);
  });

  it('runs every time without a key', async () => {
    const before = runs.count;
    await post('f', { text: 'plain' });
    const second = await post('f', { text: 'plain' });
    expect(second.body).toEqual({ ok: true, label: 'f', text: 'plain', run: before + 2 });
  });
});
