// Workspace resources.
import { z } from 'zod';
import { Timestamp, Uuid } from '../../contract/common.schemas.js';

export const Workspace = z
  .object({ id: Uuid, name: z.string(), stackLimit: z.number().int(), createdAt: Timestamp })
  .meta({ id: 'Workspace' });
export type Workspace = z.infer<typeof Workspace>;

export const CreatedWorkspace = Workspace.extend({
  apiKey: z.string().meta({ description: "The new workspace's first `*` key. Shown in this response only." }),
}).meta({ id: 'CreatedWorkspace' });
export type CreatedWorkspace = z.infer<typeof CreatedWorkspace>;

export const CreateWorkspaceBody = z.object({ name: z.string().trim().min(1).max(200) });
