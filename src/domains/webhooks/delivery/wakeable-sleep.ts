// A pause that ends after `ms` or as soon as someone calls wake(), whichever comes first.
export interface WakeableSleep {
  wait(ms: number): Promise<void>;
  wake(): void;
}

export function wakeableSleep(): WakeableSleep {
  let pending: (() => void) | undefined;
  let woken = false;
  return {
    wait(ms) {
      if (woken) {
        woken = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          pending = undefined;
          resolve();
        }
        pending = done;
      });
    },
    wake() {
      if (pending) pending();
      else woken = true;
    },
  };
}
