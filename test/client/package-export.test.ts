// The client is importable from the package by its public name (package.json "exports"), from the built dist/.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVersion, projectRoot } from '../../src/platform/paths.js';

describe('package exports', () => {
  it('resolves <package>/client to the built client with its whole surface', () => {
    const script = `
      const m = await import('promotions-service/client');
      const names = ['createClient', 'ApiError', 'VersionMismatchError', 'TimeoutError', 'ConnectionError', 'verifyWebhookSignature', 'CLIENT_VERSION'];
      console.log(JSON.stringify({ missing: names.filter((n) => !(n in m)), version: m.CLIENT_VERSION }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: projectRoot, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ missing: [], version: packageVersion });
  });

  it('points <package>/client at the built client package: compiled JS and declarations, never TypeScript sources', () => {
    const manifest = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));
    const { types, default: code } = manifest.exports['./client'] as { types: string; default: string };
    expect(types).toMatch(/^\.\/dist\/client-package\/.*\.d\.ts$/);
    expect(code).toMatch(/^\.\/dist\/client-package\/.*\.js$/);
    for (const file of [types, code]) expect(existsSync(path.join(projectRoot, file)), file).toBe(true);
    expect(manifest.files).toContain('dist/client-package');
  });
});
