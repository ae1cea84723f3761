// API key resources: inputs and outputs. The full key appears only in the creation response.
import { z } from 'zod';
import { Timestamp, Uuid } from '../../contract/common.schemas.js';
import { ALL_SCOPES } from '../../contract/scopes.js';
import { secret } from '../../contract/secrets.js';
import { RateLimit } from './rate-limit.schemas.js';

export const ScopeName = z
  .enum(ALL_SCOPES as [string, ...string[]])
  .meta({ id: 'Scope', description: '`*`, `<group>:read`, `<group>:write` (includes read) or `workspaces:admin`.' });

export const ApiKey = z
  .object({
    id: Uuid,
    name: z.string(),
    prefix: z.string(),
    scopes: z.array(ScopeName),
    createdAt: Timestamp,
    lastUsedAt: Timestamp.nullable(),
    rateLimit: RateLimit.nullable().meta({
      description: "The key's own limit; null: the workspace's default applies (else the server's, RATE_LIMIT_PER_KEY).",
    }),
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof ApiKey>;

export const CreatedApiKey = ApiKey.extend({
  key: secret(z.string().meta({ description: 'The full key, `service_<prefix>_<secret>`. Shown in this response only.' })),
}).meta({ id: 'CreatedApiKey' });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

const ApiKeyName = z.string().trim().min(1).max(200);

export const CreateApiKeyBody = z.object({
  name: ApiKeyName,
  scopes: z.array(ScopeName).min(1).max(50),
  rateLimit: RateLimit.optional(),
});

/** The operator face's seed (start-up's BOOTSTRAP_API_KEY): a key given in full, never generated. */
export const BootstrapApiKeyBody = z.object({
  key: secret(
    z
      .string()
      .regex(/^service_[A-Za-z0-9]{12}_[A-Za-z0-9]{40}$/, 'must look like service_<12 chars>_<40 chars>')
      .meta({ description: 'The full key, `service_<prefix>_<secret>`.' }),
  ),
});

export const BootstrappedApiKey = z.object({
  outcome: z.enum(['created', 'present']).meta({ description: '`present`: a key with this prefix existed already; nothing changed.' }),
  apiKeyId: Uuid,
});

export const UpdateApiKeyBody = z.object({
  name: ApiKeyName.optional(),
  rateLimit: RateLimit.nullable().optional().meta({ description: 'null: back to the workspace default.' }),
});
export type UpdateApiKeyBody = z.infer<typeof UpdateApiKeyBody>;
