#!/usr/bin/env node
// `npm run build`: the server (tsc, then the client package generated from it) and the dashboard (tsc, vite) at once:
// they write to different folders of dist/ and each is mostly one single-threaded compiler.
import { spawn } from 'node:child_process';

const step = (command, args) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}`))));
  });
const node = (...args) => step(process.execPath, args);

try {
  await Promise.all([
    node('node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json').then(() => node('scripts/build-client-package.mjs')),
    node('node_modules/typescript/bin/tsc', '-p', 'dashboard/tsconfig.json').then(() => node('node_modules/vite/bin/vite.js', 'build', '--config', 'dashboard/vite.config.ts')),
  ]);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
