#!/usr/bin/env node
// The command-line tool: serve, worker, migrate, keys create/revoke, workspaces create. JSON on stdout.
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '../config.js';
import { createLogger } from '../platform/logger.js';
import { packageVersion } from '../platform/paths.js';
import { runKeysCreate, runKeysRevoke, runMigrate, runWorkspacesCreate, UsageError } from './admin-commands.js';
import { pino } from 'pino';

const USAGE = `usage: promotions <command>

  serve                                   web service and background worker (same as npm start)
  worker                                  background worker only
  migrate                                 apply schema/*.sql migrations
  keys create --name N [--scopes a,b] [--workspace ID]
                                          create an API key (printed once); default scopes: * and workspaces:admin
  keys revoke <id>                        revoke an API key
  workspaces create --name N              create a workspace; prints its first key once
  --version                               print the version

The database is DATABASE_URL, or the embedded one under DATA_DIR (joined if running, else started for the command).`;

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      workspace: { type: 'string' },
      version: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.version) return void process.stdout.write(packageVersion + '\n');
  const [command, sub, arg] = positionals;
  if (values.help || !command) return void process.stdout.write(USAGE + '\n');
  if (command === 'serve' || command === 'start') return void (await import('../main.js'));
  if (command === 'worker') return void (await import(new URL('../../workers/background.js', import.meta.url).href));

  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2));
  let result: unknown;
  if (command === 'migrate') result = await runMigrate(config, log);
  else if (command === 'keys' && sub === 'create') result = await runKeysCreate(config, log, values);
  else if (command === 'keys' && sub === 'revoke') result = await runKeysRevoke(config, log, { id: arg });
  else if (command === 'workspaces' && sub === 'create') result = await runWorkspacesCreate(config, log, values);
  else throw new UsageError(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  process.stderr.write(`error: ${(error as Error).message}\n`);
  process.exit(1);
});
