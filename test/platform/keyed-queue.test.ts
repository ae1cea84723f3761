// Work queued per key: one key's work runs in turn, other keys' at once, a failure stops nobody, and nothing is kept.
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from '../../src/platform/keyed-queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('KeyedQueue', () => {
  it("runs one key's work in turn, in the order it was queued", async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const work = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      return name;
    };
    const answers = await Promise.all([queue.run('order-1', work('a')), queue.run('order-1', work('b')), queue.run('order-1', work('c'))]);
    expect(answers).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
  });

  it("lets other keys' work run at the same time", async () => {
    const queue = new KeyedQueue();
    let running = 0;
    let most = 0;
    const work = async () => {
      most = Math.max(most, ++running);
      await tick();
      running -= 1;
    };
    await Promise.all([queue.run('order-1', work), queue.run('order-2', work), queue.run('order-3', work)]);
    expect(most).toBe(3);
  });

  it('gives a failure to its caller only: the next work of the key still runs', async () => {
    const queue = new KeyedQueue();
    const failing = queue.run('order-1', async () => {
      throw new Error('refused');
    });
    const next = queue.run('order-1', async () => 'ran');
    await expect(failing).rejects.toThrow('refused');
    await expect(next).resolves.toBe('ran');
  });

  it('forgets a key once its last work is done', async () => {
    const queue = new KeyedQueue();
    const running = queue.run('order-1', tick);
    expect(queue.size).toBe(1);
    await running;
    expect(queue.size).toBe(0);
  });

  it('keeps two queues apart: work in one never waits for the other', async () => {
    const one = new KeyedQueue();
    const other = new KeyedQueue();
    let release!: () => void;
    const held = one.run('order-1', () => new Promise<void>((resolve) => (release = resolve)));
    await expect(other.run('order-1', async () => 'free')).resolves.toBe('free');
    release();
    await held;
  });
});
