// Runs the built CLI (dist/src/cli/index.js, as the package's bin) as a subprocess.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/platform/paths.js';

export const CLI_ENTRY = path.join(projectRoot, 'dist/src/cli/index.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCliProcess(args: string[], env: Record<string, string | undefined>, options: { entry?: string; stdin?: string; node?: boolean } = {}): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const [command, commandArgs] = options.node === false ? [options.entry!, args] : [process.execPath, [options.entry ?? CLI_ENTRY, ...args]];
  const child = spawn(command, commandArgs, { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
