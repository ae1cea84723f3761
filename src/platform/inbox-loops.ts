// Inboxes of outbox events, and the loops that drain them: each takes the next row and reacts to it in one transaction (`react` answers false
// when the inbox is empty), pauses `pollMs` when idle and 1 s after a failure (the row stays and is taken again).
// `wake` ends every pause at once (a hint that rows arrived); `stop` lets the reactions in flight finish.
import type { Sql } from './database.js';
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

/** An outbox event copied into a subscriber's inbox table (loyalty_event_inbox, referral_event_inbox). */
export interface InboxRow<T extends string> {
  eventId: string;
  workspaceId: string;
  type: T;
  payload: Record<string, unknown>;
}

/**
 * Takes the oldest row of an inbox nobody holds and deletes it in the caller's transaction: the reaction commits with
 * the removal, or both roll back (a killed worker's row is taken again by the next).
 */
export async function takeInboxRow<T extends string>(tx: Sql, inbox: 'loyalty_event_inbox' | 'referral_event_inbox'): Promise<InboxRow<T> | undefined> {
  const { rows } = await tx.query<{ event_id: string; workspace_id: string; type: T; payload: Record<string, unknown> }>(
    `DELETE FROM ${inbox} WHERE event_id = (
       SELECT event_id FROM ${inbox} ORDER BY created_at, event_id LIMIT 1 FOR UPDATE SKIP LOCKED
     ) RETURNING event_id, workspace_id, type, payload`,
  );
  const r = rows[0];
  return r && { eventId: r.event_id, workspaceId: r.workspace_id, type: r.type, payload: r.payload };
}
