// What one best-deal qualification allocates on the web thread, measured with V8's sampling heap profiler (through
// node:inspector) over the bench's 20 offers: bytes a request by function and file, the service's own and the test
// client's apart. Allocation is what the p99 of the bench's best-deal rows pays for (young-generation scavenges while
// the heap holds large caches), and unlike a latency it does not move with the machine's hour. A measurement, not a
// check of behaviour: it runs only with ALLOCATION_BENCH=1, and prints its table.
import { Session } from 'node:inspector/promises';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module of the bench, without types
import { seedOffers } from '../../bench/best-deal-bench.mjs';
import { startTestService, type TestService } from '../support/service.js';

const enabled = process.env.ALLOCATION_BENCH === '1';
const REQUESTS = Number(process.env.ALLOCATION_REQUESTS ?? 1_000);

let service: TestService;
beforeAll(async () => {
  if (enabled) service = await startTestService();
}, 60_000);
afterAll(async () => service?.close());

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

describe('best deal allocation', () => {
  it.skipIf(!enabled)('prints the bytes one best-deal qualification over 20 offers allocates', async () => {
    const { api } = await service.newWorkspace();
    // The bench's own offers (bench/best-deal-bench.mjs), through this workspace's key.
    const customer = (await seedOffers((method: string, path: string, body: unknown) => api.create(`/api/v1${path}`, body), 'CHF', 20)) as { id: string };
    const ask = async (i: number) => {
      const amount = 5_000 + ((i * 7_919) % 15_000);
      const answer = await api.post('/api/v1/qualifications', { order: { amount, currency: 'CHF', items: [{ productId: 'p', quantity: 1, price: amount }] }, customer: { id: customer.id }, bestDeal: true });
      expect(answer.status).toBe(200);
      expect(answer.body.bestDeal.exact).toBe(true);
    };
    for (let i = 0; i < 300; i++) await ask(i);

    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    for (let i = 0; i < REQUESTS; i++) await ask(i);
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
    session.disconnect();

    const byFunction = new Map<string, number>();
    const byArea = new Map<string, number>();
    const areaOf = (url: string) => {
      if (url.includes('/src/')) return url.slice(url.indexOf('/src/') + 1).split('/').slice(0, 2).join('/');
      if (url.includes('node_modules/')) return url.slice(url.lastIndexOf('node_modules/') + 13).split('/')[0]!;
      if (url.startsWith('node:')) return url;
      return url || '(native)';
    };
    // A sample is charged to the innermost frame of our own code (or a package's) on its stack, so JSON.parse or
    // Array.prototype.map count against the function that called them.
    const walk = (node: ProfileNode, owner: string, ownerArea: string) => {
      const url = node.callFrame.url;
      const mine = url.includes('/src/') || url.includes('node_modules/') || url.startsWith('node:');
      const name = mine ? `${node.callFrame.functionName || '(anonymous)'} ${url.replace(/.*\/(src|node_modules)\//, '$1/')}:${node.callFrame.lineNumber + 1}` : owner;
      const area = mine ? areaOf(url) : ownerArea;
      if (node.selfSize) {
        byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
        byArea.set(area, (byArea.get(area) ?? 0) + node.selfSize);
      }
      for (const child of node.children) walk(child, name, area);
    };
    walk(profile.head, '(root)', '(root)');
    const total = [...byArea.values()].reduce((a, b) => a + b, 0);
    const kb = (bytes: number) => (bytes / REQUESTS / 1024).toFixed(1).padStart(7);
    const lines = [`allocated a request, sampled every 512 bytes over ${REQUESTS} qualifications (bestDeal, 20 offers): ${kb(total)} KB`];
    lines.push('', 'by area (KB a request):');
    for (const [area, bytes] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`${kb(bytes)}  ${area}`);
    lines.push('', 'by function (KB a request):');
    for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 40)) lines.push(`${kb(bytes)}  ${name}`);
    console.info(lines.join('\n'));
    expect(total).toBeGreaterThan(0);
  }, 300_000);
});
