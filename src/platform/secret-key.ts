// The service's master secret (SECRET_KEY, or generated into the data folder) and the subkeys derived from it.
import { hkdfSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

export async function resolveSecretKey(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) return configured;
  const file = path.join(dataDir, 'secret-key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(dataDir, { recursive: true });
  const generated = randomBytes(32).toString('base64url');
  await writeFile(file, generated + '\n', { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}

/** A 32-byte key for one purpose ("cursor", "webhook-secrets", ...), so one leak does not expose the others. */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'promotions-service', purpose, 32));
}
