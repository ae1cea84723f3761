// Locates the project root (the folder holding package.json), from src/ or from dist/src/ alike.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot();
export const schemaDir = path.join(projectRoot, 'schema');

export const packageVersion: string = (
  JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }
).version;
