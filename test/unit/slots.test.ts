// Slots: at most `size` taken, waiters served in order as slots are given back, a waiter past its time gets none.
import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/platform/slots.js';

describe('Slots', () => {
  it('gives at most its size at once, then the next waiter in order as each is given back', async () => {
    const slots = new Slots(2);
    const first = (await slots.take(1_000))!;
    const second = (await slots.take(1_000))!;
    const order: string[] = [];
    const third = slots.take(1_000).then((give) => (order.push('third'), give));
    const fourth = slots.take(1_000).then((give) => (order.push('fourth'), give));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([order, slots.taken]).toEqual([[], 2]);
    first();
    first(); // a second call gives nothing more back
    expect(await third).toBeTypeOf('function');
    expect([order, slots.taken]).toEqual([['third'], 2]);
    second();
    (await fourth)!();
    (await third)!();
    expect([order, slots.taken]).toEqual([['third', 'fourth'], 0]);
  });

  it('answers undefined to a waiter whose time ran out, and it takes no slot', async () => {
    const slots = new Slots(1);
    const held = (await slots.take(10))!;
    expect(await slots.take(30)).toBeUndefined();
    held();
    expect(slots.taken).toBe(0);
    expect(await slots.take(10)).toBeTypeOf('function');
  });
});
