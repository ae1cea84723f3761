// Work queued per key: what is run for one key waits for the work before it (settled, failed or not); keys apart never wait.

export class KeyedQueue {
  /** The last work queued per key, settled; a key leaves the map when its last work is done. */
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after every work queued for `key` before it; its result or error is the caller's alone. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(work);
    const settled = mine.catch(() => undefined);
    this.tails.set(key, settled);
    try {
      return await mine;
    } finally {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    }
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
