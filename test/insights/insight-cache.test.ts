// The insights' answer cache (one per service, handed to the handlers in ServiceDeps): concurrent misses share one
// computation, answers are kept per workspace, question and input, and a failure is not kept.
import { describe, expect, it } from 'vitest';
import { InsightCache } from '../../src/domains/insights/index.js';

describe('InsightCache', () => {
  it('computes once for concurrent asks of the same question, and apart per workspace, question and input', async () => {
    const cache = new InsightCache();
    let runs = 0;
    const compute = async () => ++runs;
    const same = await Promise.all([1, 2, 3].map(() => cache.get('ws-a', 'loyalty', { interval: 'day' }, compute)));
    expect(same).toEqual([1, 1, 1]);
    expect(await cache.get('ws-b', 'loyalty', { interval: 'day' }, compute)).toBe(2);
    expect(await cache.get('ws-a', 'referrals', { interval: 'day' }, compute)).toBe(3);
    expect(await cache.get('ws-a', 'loyalty', { interval: 'hour' }, compute)).toBe(4);
    expect(await cache.get('ws-a', 'loyalty', { interval: 'day' }, compute)).toBe(1);
  });

  it('does not keep a failed answer: the next ask computes again', async () => {
    const cache = new InsightCache();
    await expect(cache.get('ws', 'q', {}, () => Promise.reject(new Error('database away')))).rejects.toThrow('database away');
    expect(await cache.get('ws', 'q', {}, async () => 'fresh')).toBe('fresh');
  });

  it('keeps two caches apart, as two services in one process have', async () => {
    const one = new InsightCache();
    const two = new InsightCache();
    await one.get('ws', 'q', {}, async () => 'one');
    expect(await two.get('ws', 'q', {}, async () => 'two')).toBe('two');
  });
});
