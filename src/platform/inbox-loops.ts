// Loops that drain an inbox table: each takes the next row and reacts to it in one transaction (`react` answers false
// when the inbox is empty), pauses `pollMs` when idle and 1 s after a failure (the row stays and is taken again).
// `wake` ends every pause at once (a hint that rows arrived); `stop` lets the reactions in flight finish.
import type { Logger } from './logger.js';

export interface InboxLoops {
  wake(): void;
  stop(): Promise<void>;
}

export function startInboxLoops(react: () => Promise<boolean>, options: { concurrency: number; pollMs: number; log: Logger; what: string }): InboxLoops {
  let stopping = false;
  const sleepers = new Set<() => void>();
  const wake = () => {
    for (const done of [...sleepers]) done();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });
  async function loop() {
    while (!stopping) {
      let reacted = false;
      try {
        reacted = await react();
      } catch (error) {
        options.log.warn({ err: (error as Error).message }, `${options.what} failed; retrying`);
        await sleep(1_000);
        continue;
      }
      if (!reacted) await sleep(options.pollMs);
    }
  }
  const loops = Promise.all(Array.from({ length: options.concurrency }, () => loop()));
  return {
    wake,
    async stop() {
      stopping = true;
      wake();
      await loops;
    },
  };
}
