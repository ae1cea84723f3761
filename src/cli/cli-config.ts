// Where the CLI finds the service and its API key: environment or a config file, never a command-line flag
// (flags land in shell history and in `ps`).
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './operation-command.js';

export const API_KEY_ENV = 'PROMOTIONS_API_KEY';
export const BASE_URL_ENV = 'PROMOTIONS_URL';
export const CONFIG_ENV = 'PROMOTIONS_CONFIG';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

export interface ClientSettings {
  baseUrl: string;
  apiKey: string;
  /** Where the key came from, for messages (never the key itself). */
  keySource: string;
  warnings: string[];
}

export function defaultConfigPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'promotions', 'config.json');
}

interface ConfigFile {
  baseUrl?: string;
  apiKey?: string;
}

function readConfigFile(file: string, explicit: boolean, warnings: string[]): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (!explicit && (error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read the config file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`the config file ${file} is not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`the config file ${file} must hold a JSON object`);
  const { baseUrl, apiKey } = parsed as Record<string, unknown>;
  if (baseUrl !== undefined && typeof baseUrl !== 'string') throw new UsageError(`${file}: baseUrl must be a string`);
  if (apiKey !== undefined && typeof apiKey !== 'string') throw new UsageError(`${file}: apiKey must be a string`);
  if (apiKey && process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
    warnings.push(`warning: ${file} holds an API key and is readable by others; run chmod 600 ${file}`);
  }
  return { ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}) };
}

/** Key: PROMOTIONS_API_KEY, else the config file. URL: --base-url, PROMOTIONS_URL, the config file, the default. */
export function resolveClientSettings(env: NodeJS.ProcessEnv, flags: { config?: string | undefined; baseUrl?: string | undefined }): ClientSettings {
  const warnings: string[] = [];
  const explicit = flags.config ?? env[CONFIG_ENV];
  const file = explicit ?? defaultConfigPath(env);
  const config = readConfigFile(file, explicit !== undefined, warnings);
  const baseUrl = flags.baseUrl ?? env[BASE_URL_ENV] ?? config.baseUrl ?? DEFAULT_BASE_URL;
  try {
    new URL(baseUrl);
  } catch {
    throw new UsageError(`not a URL: ${baseUrl}`);
  }
  const fromEnv = env[API_KEY_ENV];
  const apiKey = fromEnv || config.apiKey;
  if (!apiKey) {
    throw new UsageError(
      `no API key: set ${API_KEY_ENV}, or put {"apiKey": "service_..."} in ${file} (or a file named by --config or ${CONFIG_ENV}).`,
    );
  }
  return { baseUrl, apiKey, keySource: fromEnv ? API_KEY_ENV : file, warnings };
}
