// The unit of work of a mutation: one transaction in which the handler writes, records what changed, and emits
// events; the audit entry and the events are inserted before COMMIT, so the change never commits without them.
import type { AuditTrail, RecordedChange, UnitOfWork } from '../../contract/handler.js';
import { redactSecrets } from '../../contract/secrets.js';
import { withTransaction, type Pool } from '../../platform/database.js';
import { recordEvents, type NewEvent } from '../events/index.js';
import { insertAuditEntries } from './audit-entry.queries.js';

export interface Mutations {
  mutate<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T>;
  /** The trail for an engine write; counts as the operation's audit entry. */
  auditTrail(): AuditTrail;
  /** Whether a change was committed with its entry, or handed to the engine with its trail. */
  readonly audited: boolean;
}

/** Strips the secret fields (named by the registry's schemas) from a recorded change. */
export function redactChange(change: RecordedChange, secretFields: ReadonlySet<string>): RecordedChange {
  return {
    resourceType: change.resourceType,
    resourceId: change.resourceId ?? null,
    ...(change.before !== undefined ? { before: redactSecrets(toJson(change.before), secretFields) } : {}),
    ...(change.after !== undefined ? { after: redactSecrets(toJson(change.after), secretFields) } : {}),
  };
}

const toJson = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

export function createMutations(db: Pool, trail: AuditTrail, secretFields: ReadonlySet<string>): Mutations {
  let used = false;
  let audited = false;
  return {
    get audited() {
      return audited;
    },
    auditTrail() {
      audited = true;
      return trail;
    },
    async mutate(work) {
      if (used) throw new Error(`${trail.operation}: one operation is one unit of work (mutate called twice)`);
      used = true;
      const result = await withTransaction(db, async (tx) => {
        let change: RecordedChange | undefined;
        const events: NewEvent[] = [];
        const unit: UnitOfWork = {
          tx,
          record(recorded) {
            if (change) throw new Error(`${trail.operation}: a unit of work records one change`);
            change = redactChange(recorded, secretFields);
          },
          emit(type, payload) {
            events.push({ workspaceId: trail.workspaceId, type, payload: redactSecrets(payload, secretFields) as Record<string, unknown> });
          },
        };
        const value = await work(unit);
        if (!change) throw new Error(`${trail.operation}: the unit of work committed no recorded change`);
        await insertAuditEntries(tx, [{ trail, change }]);
        await recordEvents(tx, events);
        return value;
      });
      audited = true;
      return result;
    },
  };
}
