// Endpoint lanes: a bound per endpoint, a line sized by how fast the endpoint answers, and 'full' beyond it.
import { describe, expect, it } from 'vitest';
import { endpointLanes } from '../../src/domains/webhooks/delivery/endpoint-lanes.js';

describe('endpoint lanes', () => {
  it('runs at most perEndpoint at once per endpoint and starts the next in line when one finishes', () => {
    const started: string[] = [];
    const lanes = endpointLanes<string>({ perEndpoint: 2, maxLine: 10, waitBudgetMs: 1_000 });
    const start = (item: string) => void started.push(item);
    expect(['a1', 'a2', 'a3'].map((i) => lanes.admit('a', i, start))).toEqual(['started', 'started', 'queued']);
    expect(lanes.admit('b', 'b1', start)).toBe('started');
    expect(started).toEqual(['a1', 'a2', 'b1']);
    lanes.finished('a', 5);
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    expect(lanes.drain()).toEqual([]);
  });

  it('gives a fast endpoint a long line and a slow one a short line', () => {
    const lanes = endpointLanes<number>({ perEndpoint: 1, maxLine: 50, waitBudgetMs: 1_000 });
    const noop = () => undefined;
    lanes.admit('fast', 0, noop);
    lanes.finished('fast', 10);
    lanes.admit('slow', 0, noop);
    lanes.finished('slow', 1_000);
    lanes.admit('fast', 1, noop);
    lanes.admit('slow', 1, noop);
    const fast = Array.from({ length: 60 }, (_, i) => lanes.admit('fast', i + 2, noop));
    const slow = Array.from({ length: 5 }, (_, i) => lanes.admit('slow', i + 2, noop));
    expect(fast.filter((r) => r === 'queued')).toHaveLength(50);
    expect(fast.at(-1)).toBe('full');
    expect(slow).toEqual(['queued', 'full', 'full', 'full', 'full']);
    expect(lanes.drain()).toHaveLength(51);
  });
});
