// turnBatched: the calls of one event-loop turn go as one batch; with a limit of batches in flight, the calls made
// while the limit is reached wait and go together in one next batch, whatever the number of turns they came in.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { turnBatched } from '../../src/platform/turn-batches.js';

/** A batch function whose batches end when the test says so; it records each batch's keys. */
function gate() {
  const batches: number[][] = [];
  const open: Array<() => void> = [];
  const batch = (keys: readonly number[]) =>
    new Promise<number[]>((resolve) => {
      batches.push([...keys]);
      open.push(() => resolve(keys.map((k) => k * 10)));
    });
  return { batches, batch, endOldest: () => open.shift()!() };
}

const alone = async (k: number) => k * 10;

describe('turnBatched', () => {
  it('sends each turn its own batch when no limit is set', async () => {
    const g = gate();
    const load = turnBatched(g.batch, alone);
    const first = [load(1), load(2)];
    await nextTurn();
    const second = [load(3)];
    await nextTurn();
    await nextTurn();
    expect(g.batches).toEqual([[1, 2], [3]]);
    g.endOldest();
    g.endOldest();
    expect(await Promise.all([...first, ...second])).toEqual([10, 20, 30]);
  });

  it('holds the calls made while the limit is out, over several turns, for one next batch', async () => {
    const g = gate();
    const load = turnBatched(g.batch, alone, { inFlight: 1, maxWaitMs: 60_000 });
    const answers = [load(1)];
    await nextTurn();
    expect(g.batches).toEqual([[1]]);
    // Three turns while the first batch is out: their calls wait together.
    for (const k of [2, 3, 4]) {
      answers.push(load(k));
      await nextTurn();
      await nextTurn();
    }
    expect(g.batches).toEqual([[1]]);
    g.endOldest();
    await nextTurn();
    await nextTurn();
    expect(g.batches).toEqual([[1], [2, 3, 4]]);
    g.endOldest();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40]);
  });

  it('keeps at most the limit out at once, and answers a failed batch key by key', async () => {
    const g = gate();
    let out = 0;
    let most = 0;
    const load = turnBatched(
      async (keys: readonly number[]) => {
        out += 1;
        most = Math.max(most, out);
        try {
          if (keys.includes(13)) throw new Error('refused');
          return await g.batch(keys);
        } finally {
          out -= 1;
        }
      },
      async (k) => {
        if (k === 13) throw new Error('thirteen');
        return k * 10;
      },
      { inFlight: 2, maxWaitMs: 60_000 },
    );
    const answers: Array<Promise<number>> = [];
    for (let k = 0; k < 12; k++) {
      answers.push(load(k));
      await nextTurn();
      await nextTurn();
    }
    // Two out; the ten asked in the ten turns after wait as one batch.
    expect(g.batches).toEqual([[0], [1]]);
    g.endOldest();
    await nextTurn();
    await nextTurn();
    expect(g.batches).toEqual([[0], [1], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]);
    const unlucky = load(13).catch((error: Error) => error.message);
    const sameTurn = load(14);
    await nextTurn();
    await nextTurn();
    g.endOldest();
    g.endOldest();
    expect(await unlucky).toBe('thirteen');
    // 14 was asked in the turn of 13: the failed batch answered it alone.
    expect(await sameTurn).toBe(140);
    expect(await Promise.all(answers)).toEqual(Array.from({ length: 12 }, (_, k) => k * 10));
    expect(most).toBe(2);
  });
  it('sends a held batch after maxWaitMs when the batch out never ends', async () => {
    const g = gate();
    const load = turnBatched(g.batch, alone, { inFlight: 1, maxWaitMs: 200 });
    const first = load(1);
    await nextTurn();
    const started = performance.now();
    const held = load(2);
    await nextTurn();
    await nextTurn();
    expect(g.batches).toEqual([[1]]);
    while (g.batches.length < 2 && performance.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(g.batches).toEqual([[1], [2]]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    g.endOldest();
    g.endOldest();
    expect(await Promise.all([first, held])).toEqual([10, 20]);
  });
});
