// The CLI's dispatcher: operator commands (database), client commands generated from an operation list (one per
// operation: `promotions <group> <verb>`), bulk import/export and the MCP stdio server.
import { createReadStream, statSync } from 'node:fs';
import { ApiError, CLIENT_VERSION, createClient, PromotionsError, type PromotionsClient } from '../client/index.js';
import type { Operation } from '../contract/operation.js';
import { resolveClientSettings } from './cli-config.js';
import { exportList, type ExportFormat } from './bulk-export.js';
import { bulkFieldOf, importCsv, importStreamed, isStreamedImport } from './bulk-import.js';
import { MAX_BATCH_CALLS } from '../client/version.js';
import { inputFromWords, operationHelp, splitWords, UsageError } from './operation-command.js';
import { formatResult, outputWidth, wrap } from './output.js';
import { csvProgress, exportProgress, streamedImportProgress } from './progress.js';

export { UsageError };

const GLOBAL_BOOLEANS: ReadonlySet<string> = new Set(['pretty', 'all', 'help', 'version']);
const GLOBAL_VALUES = ['config', 'base-url', 'input', 'format', 'concurrency', 'batch-size', 'columns', 'toolset'];
/** Where summaries start in the help's command lists. */
const COMMAND_COLUMN = 34;

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
export const commandOf = (operation: Operation) => {
  const [group, verb] = operation.name.split('.') as [string, string];
  return `${kebab(group)} ${kebab(verb)}`;
};

/** A command and its summary, in a column `width` wide, wrapped at 80 columns. */
function commandLine(command: string, summary: string, width: number): string {
  const head = `  ${command}`;
  if (head.length + 2 > width) return `${head}\n${wrap(' '.repeat(width) + summary, width)}`;
  return wrap(head.padEnd(width) + summary, width);
}

function usage(operations: readonly Operation[]): string {
  const width = COMMAND_COLUMN;
  const line = (command: string, summary: string) => commandLine(command, summary, width);
  const apiCommands = operations.map((op) => line(commandOf(op), op.summary));
  return [
    'usage: promotions <command> [arguments] [--field value ...] [--pretty]',
    '',
    'Operator commands (on the database: DATABASE_URL, or the embedded one under',
    'DATA_DIR):',
    line('serve', 'web service and background worker (same as npm start)'),
    line('worker', 'background worker only'),
    line('migrate', 'apply schema/*.sql migrations'),
    line('keys create --name N [--scopes a,b] [--workspace ID]', 'create an API key (printed once); default scopes: * and workspaces:admin'),
    line('keys revoke <id>', 'revoke an API key'),
    line('workspaces create --name N', 'create a workspace; prints its first key once'),
    line('staff create --email E --role R [--workspace ID]', 'invite a staff user (owner, admin, member, viewer); prints a one-time dashboard link'),
    '',
    'API commands (over RPC). The key comes from PROMOTIONS_API_KEY or the config',
    'file (~/.config/promotions/config.json, --config <file> or PROMOTIONS_CONFIG);',
    'the service from --base-url, PROMOTIONS_URL or the config file.',
    ...apiCommands,
    line('call <operation> [...]', 'any operation by name (e.g. call workspaces.create --name Acme)'),
    line('import <group|operation> <file.csv|->', 'CSV (or NDJSON) rows into <group>.import (bulk: the file streamed, the job followed) or <group>.create, streamed [--set field=value] [--format csv|ndjson] [--batch-size 100] [--concurrency 8]'),
    line('export <group|operation>', 'every item of <group>.list, streamed [--format ndjson|csv] [filters]'),
    line('mcp', 'MCP tool server on stdio (tools = the operations the key allows)'),
    '',
    'Output is JSON; --pretty prints a table fitted to the terminal (COLUMNS),',
    'with a few columns per resource: --columns a,b,c chooses them. Lists: --all',
    'streams every page as NDJSON. <command> --help shows its fields. --version',
    'prints the version.',
  ].join('\n');
}

const MCP_HELP = [
  'usage: promotions mcp [--toolset checkout|admin] [--base-url URL] [--config <file>]',
  '',
  'Serves the operations the API key allows as MCP tools on stdin/stdout, for an',
  'agent host that starts it as a subprocess. The key comes from',
  'PROMOTIONS_API_KEY or the config file, never from a flag. --toolset checkout',
  'lists only validate, redeem, stack, roll back, qualification and customer',
  'lookup; admin the rest; default both.',
].join('\n');

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

function clientFrom(io: Io, flags: Map<string, string | true>, operations: readonly Operation[]): PromotionsClient {
  const text = (name: string) => (typeof flags.get(name) === 'string' ? (flags.get(name) as string) : undefined);
  const settings = resolveClientSettings(io.env, { config: text('config'), baseUrl: text('base-url') });
  for (const warning of settings.warnings) io.stderr.write(warning + '\n');
  return createClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, extraOperations: operations });
}

function findOperation(operations: readonly Operation[], words: string[]): { operation: Operation; rest: string[] } | undefined {
  const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const [first, second, ...rest] = words;
  if (first === 'call') {
    const operation = operations.find((op) => op.name === second);
    if (!operation) throw new UsageError(`no operation named ${second ?? '(none)'}`);
    return { operation, rest };
  }
  if (!first || !second) return undefined;
  const operation = operations.find((op) => op.name === `${camel(first)}.${camel(second)}`);
  return operation ? { operation, rest } : undefined;
}

function globalsOut(flags: Map<string, string | true>): Map<string, string | true> {
  const fieldFlags = new Map(flags);
  for (const name of [...GLOBAL_BOOLEANS, ...GLOBAL_VALUES, 'set']) fieldFlags.delete(name);
  return fieldFlags;
}

function parseInputFlag(value: string | true | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === true) throw new UsageError('--input needs a JSON object');
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error();
    return parsed as Record<string, unknown>;
  } catch {
    throw new UsageError('--input must be a JSON object');
  }
}

/** A list operation answers `{ data, next? }` pages: a GET taking a cursor. */
function isListOperation(operation: Operation): boolean {
  return operation.method === 'get' && Boolean(operation.query?.shape.cursor);
}

function resolveBulkOperation(operations: readonly Operation[], target: string | undefined, verb: 'create' | 'list'): Operation {
  if (!target) throw new UsageError(`name a group (e.g. vouchers) or an operation`);
  const camel = target.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const name = camel.includes('.') ? camel : `${camel}.${verb}`;
  const operation = operations.find((op) => op.name === name);
  if (!operation) throw new UsageError(`no operation named ${name}`);
  if (verb === 'list' && !isListOperation(operation)) throw new UsageError(`${name} is not a list operation`);
  return operation;
}

/**
 * `import vouchers` goes to vouchers.import when that is a bulk operation (the file streamed as its body, or its rows
 * in batches), else to vouchers.create row by row.
 */
function importOperation(operations: readonly Operation[], target: string | undefined): Operation {
  if (target && !target.includes('.')) {
    const bulk = operations.find((op) => op.name === `${target.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}.import`);
    if (bulk && (isStreamedImport(bulk) || bulkFieldOf(bulk))) return bulk;
  }
  return resolveBulkOperation(operations, target, 'create');
}

function intFlag(flags: Map<string, string | true>, name: string, fallback: number, max: number): number {
  const value = Number(flags.get(name) ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new UsageError(`--${name} must be 1..${max}`);
  return value;
}

async function runImport(io: Io, operations: readonly Operation[], words: string[]) {
  const { positionals, flags } = splitWords(words.filter((w, i) => w !== '--set' && words[i - 1] !== '--set' && !w.startsWith('--set=')), GLOBAL_BOOLEANS);
  const [target, file] = positionals;
  const operation = importOperation(operations, target);
  if (!file) throw new UsageError('import needs a CSV file (or - for stdin)');
  const sets = words.flatMap((word, i) => (word === '--set' ? [words[i + 1] ?? ''] : word.startsWith('--set=') ? [word.slice(6)] : []));
  const fixed = sets.map((pair): [string, string] => {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set takes field=value, got ${pair}`);
    return [pair.slice(0, eq), pair.slice(eq + 1)];
  });
  if (isStreamedImport(operation)) return runStreamedImport(io, operation, file, fixed, flags);
  const bulk = bulkFieldOf(operation) !== undefined;
  const batchSize = intFlag(flags, 'batch-size', bulk ? 1000 : 100, bulk ? 100_000 : MAX_BATCH_CALLS);
  const concurrency = intFlag(flags, 'concurrency', 8, 64);
  const client = clientFrom(io, flags, operations);
  const source = file === '-' ? process.stdin : createReadStream(file);
  const size = file === '-' ? undefined : statSync(file).size;
  const progress = io.stderr.isTTY ? csvProgress(io.stderr, size) : undefined;
  const report = await importCsv({ client, operation, source, fixed, batchSize, concurrency, progress });
  io.stdout.write(JSON.stringify(report, null, 2) + '\n');
  return report.failed || report.stopped ? 1 : 0;
}

/** The file as the operation's body, then its import job followed to the end; the job as JSON on stdout. */
async function runStreamedImport(io: Io, operation: Operation, file: string, fixed: Array<[string, string]>, flags: Map<string, string | true>) {
  const text = (name: string) => (typeof flags.get(name) === 'string' ? (flags.get(name) as string) : undefined);
  const format = text('format') ?? (/\.(nd)?jsonl?$/i.test(file) ? 'ndjson' : 'csv');
  if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format is csv or ndjson');
  const settings = resolveClientSettings(io.env, { config: text('config'), baseUrl: text('base-url') });
  for (const warning of settings.warnings) io.stderr.write(warning + '\n');
  const client = createClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey });
  const source = file === '-' ? process.stdin : createReadStream(file);
  const size = file === '-' ? undefined : statSync(file).size;
  const progress = io.stderr.isTTY ? streamedImportProgress(io.stderr, size) : undefined;
  const job = await importStreamed({ client, baseUrl: settings.baseUrl, apiKey: settings.apiKey, operation, source, format, fixed, progress });
  io.stdout.write(JSON.stringify(job, null, 2) + '\n');
  return job.status === 'SUCCEEDED' && job.counts.rejected === 0 ? 0 : 1;
}

async function runExport(io: Io, operations: readonly Operation[], words: string[]) {
  const { positionals, flags } = splitWords(words, GLOBAL_BOOLEANS);
  const [target, ...params] = positionals;
  const operation = resolveBulkOperation(operations, target, 'list');
  const format = (flags.get('format') ?? 'ndjson') as ExportFormat;
  if (format !== 'ndjson' && format !== 'csv') throw new UsageError('--format is ndjson or csv');
  const input = inputFromWords(operation, params, globalsOut(flags), parseInputFlag(flags.get('input')));
  const client = clientFrom(io, flags, operations);
  const progress = io.stderr.isTTY ? exportProgress(io.stderr) : undefined;
  try {
    const result = await exportList({ client, operation, input, format, out: io.stdout, onProgress: progress?.update });
    progress?.stop();
    io.stderr.write(`${result.rows} rows exported\n`);
  } catch (error) {
    progress?.stop();
    throw error;
  }
  return 0;
}

async function runOperationCommand(io: Io, operations: readonly Operation[], operation: Operation, words: string[]) {
  const { positionals, flags } = splitWords(words, GLOBAL_BOOLEANS);
  if (flags.has('help')) {
    io.stdout.write(operationHelp(operation, commandOf(operation)) + '\n');
    return 0;
  }
  if (flags.has('api-key') || flags.has('key')) {
    throw new UsageError('the API key is never taken from a flag (shell history): set PROMOTIONS_API_KEY or use a config file');
  }
  const input = inputFromWords(operation, positionals, globalsOut(flags), parseInputFlag(flags.get('input')));
  const client = clientFrom(io, flags, operations);
  if (flags.has('all')) {
    if (!isListOperation(operation)) throw new UsageError(`--all needs a list operation; ${operation.name} is not one`);
    let rows = 0;
    for await (const item of client.list(operation.name, input)) {
      rows++;
      if (!io.stdout.write(JSON.stringify(item) + '\n')) await new Promise((r) => io.stdout.once('drain', r));
    }
    if (io.stderr.isTTY) io.stderr.write(`${rows} items\n`);
    return 0;
  }
  const result = await client.call(operation.name, input);
  const columns = typeof flags.get('columns') === 'string' ? (flags.get('columns') as string).split(',').map((c) => c.trim()).filter(Boolean) : undefined;
  const text = formatResult(result, flags.has('pretty'), { columns, width: outputWidth(io.env, io.stdout) });
  if (text) io.stdout.write(text + '\n');
  return 0;
}

async function runOperatorCommand(words: string[]): Promise<unknown> {
  const { parseArgs } = await import('node:util');
  const { values, positionals } = parseArgs({
    args: words,
    allowPositionals: true,
    options: { name: { type: 'string' }, scopes: { type: 'string' }, workspace: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
  });
  const [command, sub, arg] = positionals;
  const { loadConfigOrExit } = await import('../config.js');
  const { createLogger } = await import('../platform/logger.js');
  const { pino } = await import('pino');
  const admin = await import('./admin-commands.js');
  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2));
  if (command === 'migrate') return admin.runMigrate(config, log);
  if (command === 'keys' && sub === 'create') return admin.runKeysCreate(config, log, values);
  if (command === 'keys' && sub === 'revoke') return admin.runKeysRevoke(config, log, { id: arg });
  if (command === 'staff' && sub === 'create') return admin.runStaffCreate(config, log, values);
  return admin.runWorkspacesCreate(config, log, values);
}

function isOperatorCommand(words: string[]): boolean {
  const [command, sub] = words;
  return command === 'migrate' || (command === 'keys' && (sub === 'create' || sub === 'revoke')) || (command === 'workspaces' && sub === 'create') || (command === 'staff' && sub === 'create');
}

/** Runs one command line; resolves to the exit code. */
export async function runCli(argv: readonly string[], operations: readonly Operation[], io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  const words = [...argv];
  const [command] = words;
  if (command === '--version' || command === '-v' || command === 'version') {
    io.stdout.write(CLIENT_VERSION + '\n');
    return 0;
  }
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    io.stdout.write(usage(operations) + '\n');
    return 0;
  }
  try {
    if (command === 'serve' || command === 'start') {
      await import('../main.js');
      return -1;
    }
    if (command === 'worker') {
      await import(new URL('../../workers/background.js', import.meta.url).href);
      return -1;
    }
    if (isOperatorCommand(words) && (words.includes('--help') || words.includes('-h'))) {
      io.stdout.write(usage(operations) + '\n');
      return 0;
    }
    if (isOperatorCommand(words)) {
      io.stdout.write(JSON.stringify(await runOperatorCommand(words), null, 2) + '\n');
      return 0;
    }
    if (command === 'import') return await runImport(io, operations, words.slice(1));
    if (command === 'export') return await runExport(io, operations, words.slice(1));
    if (command === 'mcp') {
      if (words.includes('--help') || words.includes('-h')) {
        io.stdout.write(MCP_HELP + '\n');
        return 0;
      }
      const { serveMcpOverStdio } = await import('./mcp-stdio.js');
      const { parseToolsets } = await import('../transports/mcp-tools.js');
      const { flags } = splitWords(words.slice(1), GLOBAL_BOOLEANS);
      const toolset = flags.get('toolset');
      let toolsets;
      try {
        toolsets = parseToolsets(typeof toolset === 'string' ? toolset : undefined);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      await serveMcpOverStdio(clientFrom(io, flags, operations), operations, toolsets);
      return 0;
    }
    const found = findOperation(operations, words);
    if (!found) {
      const group = operations.filter((op) => commandOf(op).startsWith(command + ' '));
      const hint = group.length ? `\n\n${command} commands:\n${group.map((op) => commandLine(commandOf(op), op.summary, COMMAND_COLUMN)).join('\n')}` : `\n\n${usage(operations)}`;
      throw new UsageError(`unknown command: ${words.filter((w) => !w.startsWith('-')).slice(0, 2).join(' ')}${hint}`);
    }
    return await runOperationCommand(io, operations, found.operation, found.rest);
  } catch (error) {
    return reportError(io, error);
  }
}

function reportError(io: Io, error: unknown): number {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    io.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  if (error instanceof ApiError) {
    // The problem as JSON on stderr, so scripts can read the code.
    io.stderr.write(JSON.stringify(error.toProblem()) + '\n');
    return 1;
  }
  if (error instanceof PromotionsError) {
    io.stderr.write(`error: ${error.message}\n`);
    return 1;
  }
  io.stderr.write(`error: ${(error as Error).message}\n`);
  return 1;
}
