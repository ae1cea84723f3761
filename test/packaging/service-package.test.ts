// What `npm pack` of the service ships: the compiled service, CLI, client and workers, the migrations and the
// README; never the TypeScript sources, tests, benchmarks, CI files or source maps.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/paths.js';

const manifest = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));

function packedFiles(): string[] {
  // The build already ran (pretest); prepack would only build again.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: projectRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return (JSON.parse(out)[0].files as Array<{ path: string }>).map((f) => f.path);
}

describe('the service package', () => {
  it('builds before packing and ships what runs, and only that', () => {
    expect(manifest.scripts.prepack).toContain('npm run build');
    const files = packedFiles();
    const bin = String(manifest.bin.promotions);
    for (const needed of [bin, 'dist/src/main.js', 'dist/workers/background.js', 'dist/workers/partition.js', 'dist/dashboard/index.html', manifest.exports['./client'].default.replace(/^\.\//, ''), 'schema/0001_create_workspaces_and_api_keys.sql', 'README.md', 'package.json']) {
      expect(files, needed).toContain(needed);
    }
    for (const migration of readdirSync(path.join(projectRoot, 'schema'))) expect(files, migration).toContain(`schema/${migration}`);
    const strays = files.filter((f) => /^(test|bench|\.ci|src|workers)\//.test(f) || f.startsWith('dist/test/') || f.startsWith('dist/bench/') || f.endsWith('.map'));
    expect(strays).toEqual([]);
    expect(existsSync(path.join(projectRoot, bin))).toBe(true);
  });
});
