// The bulk-import benchmark: starts the real service (embedded PostgreSQL in a temp folder, worker off), streams
// BENCH_IMPORT_ROWS codes (default 1,000,000) as CSV to POST /api/v1/vouchers/import and follows the job to SUCCEEDED;
// then the same as NDJSON, the same CSV again (every row refused as existing), and in the same run the reference: bulk
// generation of as many codes through vouchers.generate (100,000 per call). Prints a table and one JSON line.
// Run under the machine-wide lock: flock /tmp/bench.lock node bench/import-bench.mjs (after npm run build).
import { randomInt } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, runBounded, serviceEnv, startServiceProcess } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const cleanups = [];
const alnum = (n) => Array.from({ length: n }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[randomInt(62)]).join('');

/** CPU seconds (user + system) of a process so far. */
async function cpuSeconds(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The rows as a web stream of ~64 KiB chunks, generated as they are sent (nothing held in memory). */
function body(rows, line, header) {
  let i = 0;
  let headerSent = header === undefined;
  return new ReadableStream({
    pull(controller) {
      let chunk = headerSent ? '' : `${header}\n`;
      headerSent = true;
      while (chunk.length < 65_536 && i < rows) chunk += line(i++) + '\n';
      if (chunk) controller.enqueue(new TextEncoder().encode(chunk));
      if (i >= rows) controller.close();
    },
  });
}

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-import-bench-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const key = `service_${alnum(12)}_${alnum(40)}`;
  const port = await freePort();
  const env = serviceEnv({ dataDir, port, healthPort: await freePort(), key });
  console.error(`starting the service (embedded PostgreSQL under ${dataDir}) ...`);
  const { child } = await startServiceProcess(root, env, cleanups);
  const baseUrl = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${key}` };
  const api = async (method, p, json) => {
    const res = await fetch(`${baseUrl}/api/v1${p}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: json && JSON.stringify(json) });
    const answer = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const campaign = () => api('POST', '/campaigns', { name: 'bench', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { discount: { type: 'AMOUNT', amountOff: 500 }, redemptionLimit: 1 } });

  const results = [];
  const importRun = async (name, rows, contentType, line, header) => {
    const { id: campaignId } = await campaign();
    const cpuBefore = await cpuSeconds(child.pid);
    const started = performance.now();
    const res = await fetch(`${baseUrl}/api/v1/vouchers/import?campaignId=${campaignId}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': contentType },
      body: body(rows, line, header),
      duplex: 'half',
    });
    let job = await res.json();
    if (res.status !== 202) throw new Error(`${name}: ${res.status} ${JSON.stringify(job)}`);
    const uploaded = performance.now();
    const cpuUpload = (await cpuSeconds(child.pid)) - cpuBefore;
    while (job.status !== 'SUCCEEDED' && job.status !== 'FAILED') {
      await new Promise((r) => setTimeout(r, 250));
      job = await api('GET', `/imports/${job.id}`);
    }
    const seconds = (performance.now() - started) / 1000;
    const row = {
      scenario: name,
      rows,
      seconds: Math.round(seconds * 10) / 10,
      uploadSeconds: Math.round((uploaded - started) / 100) / 10,
      rowsPerSecond: Math.round(rows / seconds),
      serviceCpuDuringUpload: Math.round(cpuUpload * 10) / 10,
      status: job.status,
      counts: job.counts,
    };
    console.error(`  ${name}: ${row.seconds} s (upload and staging ${row.uploadSeconds} s), ${JSON.stringify(job.counts)} ${job.status}`);
    results.push(row);
    return { campaignId, job };
  };
  const wanted = (name) => ONLY.length === 0 || ONLY.some((w) => name.includes(w));

  const code = (prefix) => (i) => `${prefix}-${String(i).padStart(8, '0')}`;
  if (wanted('csv')) await importRun('import, CSV', ROWS, 'text/csv', code('CSV'), 'code');
  if (wanted('ndjson')) await importRun('import, NDJSON', ROWS, 'application/x-ndjson', (i) => `{"code":"${code('ND')(i)}","metadata":{"n":${i}}}`);
  if (wanted('again')) await importRun('import, CSV, every code taken', ROWS, 'text/csv', code('CSV'), 'code');
  if (wanted('generate')) {
    const { id } = await campaign();
    const started = performance.now();
    for (let made = 0; made < ROWS; made += 100_000) await api('POST', `/campaigns/${id}/vouchers/generate`, { count: Math.min(100_000, ROWS - made) });
    const seconds = (performance.now() - started) / 1000;
    console.error(`  reference, vouchers.generate: ${seconds.toFixed(1)} s`);
    results.push({ scenario: 'reference: vouchers.generate, 100,000 per call', rows: ROWS, seconds: Math.round(seconds * 10) / 10, rowsPerSecond: Math.round(ROWS / seconds) });
  }

  const reference = results.find((r) => r.scenario.startsWith('reference'));
  console.log('| scenario | rows | seconds | of which upload + staging | rows/s | vs generate |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    const ratio = reference && r !== reference ? `${(reference.seconds / r.seconds).toFixed(2)}x` : '';
    console.log(`| ${r.scenario} | ${r.rows.toLocaleString('en')} | ${r.seconds} | ${r.uploadSeconds ?? ''} | ${r.rowsPerSecond.toLocaleString('en')} | ${ratio} |`);
  }
  console.log(JSON.stringify({ bench: 'import', date: new Date().toISOString(), results }));
}

runBounded(main, TIMEOUT_MS, cleanups);
