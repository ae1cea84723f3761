// The operator face: start-up (BOOTSTRAP_API_KEY, BOOTSTRAP_ADMIN_*) and the admin CLI run their changes through the
// one pipeline, in-process, as an actor they name themselves: reaching the database is their authority, not a key.
import { randomBytes, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Actor } from '../contract/actor.js';
import type { RedemptionEngine } from '../contract/engine-port.js';
import type { Operation, OperationOutput } from '../contract/operation.js';
import type { ServiceSettings } from '../contract/service-settings.js';
import { serviceDeps } from '../composition.js';
import { operations } from '../registry.js';
import { secretFieldNames } from '../contract/secrets.js';
import { apiKeyContract, apiKeyHandlers, apiKeyOperatorContract, apiKeyOperatorHandlers } from '../domains/access/index.js';
import { staffContract, staffHandlers, staffOperatorContract, staffOperatorHandlers } from '../domains/staff/index.js';
import { workspaceContract, workspaceHandlers } from '../domains/workspaces/index.js';
import { createCursorCodec } from '../platform/cursor.js';
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import { OperationPipeline } from './execute-operation.js';

/** What operators do: the CLI's commands (registered operations) and start-up's seeds (operator-only operations). */
const OPERATOR_OPERATIONS: readonly Operation[] = [
  apiKeyContract.createApiKey,
  apiKeyContract.revokeApiKey,
  workspaceContract.createWorkspace,
  staffContract.createInvitation,
  apiKeyOperatorContract.bootstrapApiKey,
  staffOperatorContract.bootstrapOwner,
];

export interface OperatorFace {
  /** Runs one operation as `actor` (scope checked, input parsed, audited in its unit of work); its output, or throws. */
  run<Op extends Operation>(operation: Op, actor: Actor, input: z.input<Op['input']>): Promise<OperationOutput<Op>>;
}

export interface OperatorFaceOptions {
  db: Pool;
  log: Logger;
  /** Names the runs in the audit log: request ids `<source>-<uuid>` (e.g. `cli`, `start-up`). */
  source: string;
  userAgent: string;
  /** The settings of the process (its composition root made them). */
  settings: ServiceSettings;
}

/** None of the operator's operations reaches the redemption engine, and this process runs none. */
function absentEngine(): RedemptionEngine {
  const refuse = () => Promise.reject(new Error('the operator face runs no redemption engine'));
  return {
    validate: refuse,
    validateMany: refuse,
    redeem: refuse,
    rollback: refuse,
    redeemStack: refuse,
    previewStack: refuse,
    bestStack: refuse,
    releaseSession: refuse,
    adjustBalance: refuse,
    voucherChanged: refuse,
    campaignChanged: refuse,
    rulesChanged: refuse,
    tierSnapshots: refuse,
    figures: refuse,
    check: async () => ({ ok: false, detail: 'the operator face runs no redemption engine' }),
    stop: async () => undefined,
  };
}

export function createOperatorFace(options: OperatorFaceOptions): OperatorFace {
  const { db, log } = options;
  const names = new Set(OPERATOR_OPERATIONS.map((op) => op.name));
  const handlers = [...apiKeyHandlers, ...workspaceHandlers, ...staffHandlers, ...apiKeyOperatorHandlers, ...staffOperatorHandlers].filter((h) =>
    names.has(h.operation.name),
  );
  // No list runs here, so no cursor is ever issued (a throwaway key); no key cache lives in this process (a
  // revocation's NOTIFY empties the others' at commit).
  const deps = serviceDeps({ db, log, cursors: createCursorCodec(randomBytes(32)), engine: absentEngine(), settings: options.settings });
  const pipeline = new OperationPipeline({
    handlers,
    deps,
    // The operator names its actor; nothing is authenticated (the face takes no credentials).
    authenticators: [],
    secretFields: secretFieldNames([...operations, ...OPERATOR_OPERATIONS].flatMap((op) => [op.body, op.output])),
  });
  return {
    async run(operation, actor, input) {
      const request = { requestId: `${options.source}-${randomUUID()}`, userAgent: options.userAgent };
      const result = await pipeline.execute(pipeline.find(operation.name), actor, { kind: 'merged', value: input }, request, log);
      return result.body as never;
    },
  };
}
