// Reading a Prometheus text exposition in tests: scrape it, parse its samples, pick a value, and run Prometheus's own
// `promtool check metrics` over it (Debian's `prometheus` package; .ci/run installs it).
import { spawn, spawnSync } from 'node:child_process';

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export async function scrape(url: string, token?: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`GET ${url}/metrics answered ${res.status}: ${await res.text()}`);
  return res.text();
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of m[2]?.matchAll(LABEL) ?? []) labels[key!] = value!.replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function valueOf(samples: readonly MetricSample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export function has(samples: readonly MetricSample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

export function promtoolAvailable(): boolean {
  return spawnSync('promtool', ['--version']).status === 0;
}

/** promtool's verdict on an exposition: exit code 0 and its output (problems found, one a line). */
export function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}
