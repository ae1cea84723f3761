#!/usr/bin/env node
// The command-line tool's entry: the registry's operations become its API commands (see run.ts).
import { operations } from '../registry.js';
import { runCli } from './run.js';

runCli(process.argv.slice(2), operations).then(
  (code) => {
    // -1: a long-running command (serve, worker) took over the process. Otherwise exit once stdout is flushed,
    // without waiting for idle keep-alive sockets.
    if (code >= 0) process.stdout.write('', () => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
