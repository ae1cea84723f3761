// The bench's latency at an offered rate (bench/offered-rate.mjs): corrected for coordinated omission at the interval
// between two requests of one connection, not autocannon's 1 ms; checked on numbers worked by hand and on a real
// autocannon run against a real server on 127.0.0.1 whose every 25th answer waits 60 ms.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module of the bench, without types
import { correctedSamples, offeredInterval, quantile, recordOfferedRate } from '../../bench/offered-rate.mjs';

describe('bench latency at an offered rate', () => {
  it('adds the samples a long wait kept back, at the interval of one connection', () => {
    expect(offeredInterval({ connections: 10, overallRate: 500 })).toBe(20);
    // 45 ms at 20: the request due 20 ms later would have waited 25 ms (5 is under the interval: not added).
    expect(correctedSamples([3, 45, 19], 20)).toEqual([3, 45, 25, 19]);
    expect(correctedSamples([70], 20)).toEqual([70, 50, 30]);
    // autocannon's interval of 1 ms counts a response as many samples as it lasted.
    expect(correctedSamples([4], 1)).toEqual([4, 3, 2, 1]);
  });

  it('takes the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(values, 0.99)).toBe(99);
    expect(quantile(values, 0.5)).toBe(50);
    expect(quantile([], 0.99)).toBe(0);
  });

  it('records every answered request of a real run and counts the slow ones', async () => {
    let n = 0;
    const server = createServer((_req, res) => {
      const wait = ++n % 25 === 0 ? 60 : 0;
      setTimeout(() => res.end('ok'), wait);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const options = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: 4, overallRate: 200, duration: 1 };
      const instance = autocannon(options);
      const recorder = recordOfferedRate(instance, options);
      const result = await instance;
      const summary = recorder.summary();
      expect(summary.interval).toBe(20);
      expect(summary.responses).toBe(result['2xx']);
      expect(summary.responses).toBeGreaterThan(50);
      // Every 25th answer waited 60 ms: they are the ones of 20 ms or more (on a loaded machine a few more may be).
      expect(summary.over20ms).toBeGreaterThanOrEqual(Math.floor(summary.responses / 25));
      expect(summary.rawP99).toBeGreaterThanOrEqual(60);
    } finally {
      server.close();
    }
  });
});
