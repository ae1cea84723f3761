// A fixed number of slots, taken and given back, with callers waiting their turn in order for a bounded time. Waiting
// holds nothing but a promise (no database connection).

export class Slots {
  private free: number;
  private readonly waiting: Array<(granted: boolean) => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error('slots: a size of at least 1');
    this.free = size;
  }

  /** A slot, given back by calling the function returned (once); undefined when none came free within `waitMs`. */
  async take(waitMs: number): Promise<(() => void) | undefined> {
    if (this.free > 0 && this.waiting.length === 0) {
      this.free -= 1;
      return this.giver();
    }
    const granted = await new Promise<boolean>((resolve) => {
      // Either the timer or a given-back slot settles the wait: each one cancels the other.
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(wake);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      }, waitMs);
      const wake = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.waiting.push(wake);
    });
    return granted ? this.giver() : undefined;
  }

  /** Slots in use. */
  get taken(): number {
    return this.size - this.free;
  }

  private giver(): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next) next(true);
      else this.free += 1;
    };
  }
}
