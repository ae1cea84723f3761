// Import-direction rules of STYLE.md 3.3, checked by reading import statements.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/platform/paths.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : full.endsWith('.ts') ? [full] : [];
  });
}

const src = path.join(projectRoot, 'src');
const imports = filesUnder(src).flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gm)].map((m) => ({
    from: path.relative(src, file),
    to: path.relative(src, path.resolve(path.dirname(file), m[1]!)).replace(/\.js$/, '.ts'),
  })),
);

const within = (p: string, folder: string) => p.startsWith(folder + '/');
const domainOf = (p: string) => (within(p, 'domains') ? p.split('/')[1] : undefined);

describe('dependency direction', () => {
  it('keeps platform/ free of business code', () => {
    expect(imports.filter((i) => within(i.from, 'platform') && !within(i.to, 'platform'))).toEqual([]);
  });

  it('lets only contract/registry.ts reach into domains from contract/, and only their schemas and contracts', () => {
    const bad = imports.filter(
      (i) => within(i.from, 'contract') && domainOf(i.to) && (i.from !== 'contract/registry.ts' || !/\.contract\.ts$/.test(i.to)),
    );
    expect(bad).toEqual([]);
  });

  it('has domains use each other only through index.ts, schemas or contracts', () => {
    const bad = imports.filter(
      (i) => domainOf(i.from) && domainOf(i.to) && domainOf(i.from) !== domainOf(i.to) && !/(index|\.schemas|\.contract|\.rules)\.ts$/.test(i.to),
    );
    expect(bad).toEqual([]);
  });

  it('keeps SQL modules out of http/ and transports/', () => {
    const bad = imports.filter((i) => (within(i.from, 'http') || within(i.from, 'transports')) && /\.(queries|service)\.ts$/.test(i.to));
    expect(bad).toEqual([]);
  });

  it('never imports the composition roots', () => {
    expect(imports.filter((i) => i.to === 'main.ts' && i.from !== 'cli/index.ts')).toEqual([]);
  });
});
