// Issue 36's floor: the bench's validate and redeem rows against reference/lean-floor.mjs doing the same durable work
// with nothing else (see its header), on the same PostgreSQL in the same run. It tells a target out of reach on this
// machine from one the service merely misses: a CPU target is out of reach when the floor itself costs more than it
// allows; a ratio target (a row against the bare hot redeem) when the work the row adds, at the floor's price, already
// takes more than the ratio leaves. Called by run-bench.mjs; nothing here imports src/.
import os from 'node:os';
import { freePort, startReference } from './support.mjs';

const pad = (s, n) => String(s).padEnd(n);
const times = (x) => `${x.toFixed(2)}x`;
/** A row's CPU a request that the service (or the floor) and PostgreSQL take, without the load generator. */
export const serverCpu = (row) => row.cpu.service + row.cpu.postgres;

/**
 * Starts the floor on `databaseUrl` (with `thread`, its writer on a worker thread of its own), seeds its codes and the
 * bench's 1,000 returning shoppers; answers its URL and pid.
 */
export async function startFloor(root, databaseUrl, cleanups, { thread = false } = {}) {
  const port = await freePort();
  const child = await startReference(root, 'lean-floor.mjs', [String(port), databaseUrl, ...(thread ? ['thread'] : [])], cleanups);
  const url = `http://127.0.0.1:${port}`;
  const seeded = await fetch(`${url}/seed`, { method: 'POST', body: JSON.stringify({ codes: ['HOT', 'VALIDATE'], customers: Array.from({ length: 1000 }, (_, i) => `shopper-${i}`) }) });
  if (seeded.status !== 200) throw new Error(`seeding the floor failed: ${seeded.status}`);
  return { url, pid: child.pid };
}

/**
 * The floor's rows, one per service row (`scenarios`: key -> [name, autocannon options against the floor's URL]),
 * measured by `load(name, options)` (run-bench's, on the floor's node process and the PostgreSQL both share).
 */
export async function floorRows(load, scenarios) {
  const rows = {};
  for (const [key, [name, options]] of Object.entries(scenarios)) rows[key] = await load(name, options);
  return rows;
}

/** Within 5 % of a goal either way, a verdict is 'at the edge': one run's noise can carry it across. */
const EDGE = 0.05;
const measured = (service, floor) => Object.keys(floor).filter((k) => service[k]?.cpu && floor[k]?.cpu && service[k].rps && floor[k].rps);

/**
 * Issue 36's CPU, ratio and p99 targets judged against the floor, one `{ label, verdict }` each ('reachable', 'at the
 * edge' or 'out of reach'): `service` and `floor` hold the rows by the same keys (validate, hot, keyed, returning,
 * checkout, newCustomer; the floor's `hotAgain`, its hot redeem measured again after the others, and the same keys with
 * `Thread` after them, those rows with its writer on a thread of its own), each `{ name, rps,
 * p99, cpu: { service, web, postgres, load } }` as run-bench measures them; `bare` is bare node:http's row; `cpus` the
 * machine's.
 */
export function floorVerdicts(service, floor, bare, connections, cpus = os.availableParallelism()) {
  const keys = measured(service, floor);
  if (!keys.length || !bare?.cpu) return [];
  const bareCpu = bare.cpu.service;
  const verdicts = [];
  // `room`: how far the best the floor leaves is from the goal, as a ratio (above 1: room to spare).
  const judge = (label, room) => verdicts.push({ label, verdict: room >= 1 + EDGE ? 'reachable' : room <= 1 - EDGE ? 'out of reach' : 'at the edge' });
  // The CPU targets are judged against the floor with its writer on a thread of its own (`validateThread`, `hotThread`)
  // when it was measured: the least the design card's partition threads allow. The one-thread floor is shown beside.
  for (const [k, goal] of [['hot', 4], ['validate', 1.5]]) {
    if (!keys.includes(k)) continue;
    const multiple = serverCpu(floor[k]) / bareCpu;
    const own = `the floor's own ${multiple.toFixed(1)}x (${serverCpu(floor[k])} / ${bareCpu} µs)`;
    const threaded = floor[`${k}Thread`];
    const least = threaded?.cpu ? serverCpu(threaded) / bareCpu : multiple;
    const withThread = threaded?.cpu ? `, ${least.toFixed(1)}x with its writer on a thread of its own as the design's partition (${serverCpu(threaded)} µs)` : '';
    judge(`${service[k].name}: CPU a request <= ${goal}x bare node:http's: ${own}${withThread}, the service's ${(serverCpu(service[k]) / bareCpu).toFixed(1)}x`, goal / least);
  }
  // A row adds work to the hot redeem. At the floor's price for that work, the best the service's own hot redeem leaves
  // is hot / (hot + added) in CPU (a costlier hot redeem would only raise it): what is judged. Beside it, the
  // throughput ratio that CPU gives with the load generator's own cost a request of each row (it shares the CPUs, and
  // building a request per call costs it more), (hot + its load) / (hot + added + the row's load), were the CPUs as
  // busy in both rows; they are not (70 to 81 %), so that figure only informs.
  // The floor's hot redeem, measured first and again last (`hotAgain`): their mean is what the other rows add to.
  if (keys.includes('hot')) {
    const base = serverCpu(service.hot);
    const floorHot = floor.hotAgain?.cpu ? (serverCpu(floor.hot) + serverCpu(floor.hotAgain)) / 2 : serverCpu(floor.hot);
    for (const [k, goal] of [['keyed', 0.9], ['checkout', 0.8], ['newCustomer', 0.6]]) {
      if (!keys.includes(k)) continue;
      const added = Math.max(0, Math.round(serverCpu(floor[k]) - floorHot));
      const best = base / (base + added);
      const throughput = (base + service.hot.cpu.load) / (base + added + service[k].cpu.load);
      judge(
        `${service[k].name} >= ${goal}x the bare hot redeem: what it adds costs the floor ${added} µs, so at best ${times(best)} in CPU (${times(throughput)} in throughput with the load generator's cost); measured ${times(service[k].rps / service.hot.rps)}, the floor's own ${times(floor[k].rps / floor.hot.rps)}`,
        best / goal,
      );
    }
  }
  const redeems = keys.filter((k) => k !== 'validate');
  if (!redeems.length) return verdicts;
  // The p99 on the floor with its writer on a thread of its own where it ran that row (the least the design allows).
  const p99Of = (k) => (floor[`${k}Thread`]?.cpu ? floor[`${k}Thread`] : floor[k]);
  const worst = Math.max(...redeems.map((k) => p99Of(k).p99));
  judge(`p99 < 20 ms at ${connections} connections on every redeem row: the floor's own p99 ${redeems.map((k) => `${p99Of(k).name.replace(/^floor(, writer thread)?: /, '')} ${p99Of(k).p99} ms`).join(', ')}${floor[`${redeems[0]}Thread`]?.cpu ? ' (its writer on a thread of its own)' : ''}`, 20 / Math.max(worst, 1));
  // The share of the ceiling is how busy a row keeps the CPUs. The floor group-commits as the engine does (one batch in
  // flight): if none of its redeem rows, either way it runs, keeps them 90 % busy, the batch cycle itself, not the
  // service's code, holds the service's rows below it.
  const floorRedeems = redeems.flatMap((k) => [floor[k], floor[`${k}Thread`]]).filter((r) => r?.cpu && r.rps);
  const busiest = Math.max(...floorRedeems.map((r) => busyShare(r, cpus)));
  judge(`throughput >= 90 % of the ceiling (the CPUs busy) on the redeem rows: the floor's own keep them ${Math.round(Math.min(...floorRedeems.map((r) => busyShare(r, cpus))) * 100)} to ${Math.round(busiest * 100)} % busy`, busiest / 0.9);
  return verdicts;
}

/** The share of the CPUs a row keeps busy: its requests a second times the CPU each takes (the load generator's too). */
const busyShare = (r, cpus) => (r.rps * (serverCpu(r) + r.cpu.load)) / (cpus * 1e6);

/** Prints each service row against its floor row (see floorVerdicts for the arguments), then the verdicts. */
export function printFloor(service, floor, bare, connections) {
  const keys = measured(service, floor);
  if (!keys.length || !bare?.cpu) return;
  const bareCpu = bare.cpu.service;
  console.log(`\nThe floor (bench/reference/lean-floor.mjs: the same durable work, nothing else), CPU a request in µs (node (its main thread) / PostgreSQL; load generator), x bare node:http's ${bareCpu} µs:\n`);
  console.log(`| ${pad('scenario', 42)} | ${pad('req/s: service, floor', 21)} | ${pad('service CPU', 22)} | ${pad('floor CPU', 22)} | ${pad('service / floor', 15)} | ${pad('x bare: service, floor', 22)} | ${pad('CPUs busy', 10)} | ${pad('p99 ms', 10)} |`);
  console.log(`|${'-'.repeat(44)}|${'-'.repeat(23)}|${'-'.repeat(24)}|${'-'.repeat(24)}|${'-'.repeat(17)}|${'-'.repeat(24)}|${'-'.repeat(12)}|${'-'.repeat(12)}|`);
  const cell = (r) => `${r.cpu.service} (${r.cpu.web}) / ${r.cpu.postgres}; ${r.cpu.load}`;
  const busy = (r) => `${Math.round(busyShare(r, os.availableParallelism()) * 100)} %`;
  for (const k of keys) {
    const [s, f] = [service[k], floor[k]];
    console.log(`| ${pad(s.name, 42)} | ${pad(`${s.rps}, ${f.rps}`, 21)} | ${pad(cell(s), 22)} | ${pad(cell(f), 22)} | ${pad(times(serverCpu(s) / serverCpu(f)), 15)} | ${pad(`${(serverCpu(s) / bareCpu).toFixed(1)}x, ${(serverCpu(f) / bareCpu).toFixed(1)}x`, 22)} | ${pad(`${busy(s)}, ${busy(f)}`, 10)} | ${pad(`${s.p99}, ${f.p99}`, 10)} |`);
  }
  const again = floor.hotAgain;
  if (again?.cpu) console.log(`\nThe floor's hot redeem again, after its other rows: ${again.rps} req/s, ${cell(again)}, p99 ${again.p99} ms`);
  const threaded = keys.filter((k) => floor[`${k}Thread`]?.cpu);
  if (threaded.length) {
    console.log(`\nThe floor with its writer on a thread of its own (the design card's partition; one message a turn each way):\n`);
    console.log(`| ${pad('scenario', 42)} | ${pad('req/s: service, floor', 21)} | ${pad('floor CPU', 22)} | ${pad('service / floor', 15)} | ${pad('x bare: floor', 13)} | ${pad('CPUs busy', 10)} | ${pad('p99 ms', 10)} |`);
    console.log(`|${'-'.repeat(44)}|${'-'.repeat(23)}|${'-'.repeat(24)}|${'-'.repeat(17)}|${'-'.repeat(15)}|${'-'.repeat(12)}|${'-'.repeat(12)}|`);
    for (const k of threaded) {
      const [s, f] = [service[k], floor[`${k}Thread`]];
      console.log(`| ${pad(s.name, 42)} | ${pad(`${s.rps}, ${f.rps}`, 21)} | ${pad(cell(f), 22)} | ${pad(times(serverCpu(s) / serverCpu(f)), 15)} | ${pad(`${(serverCpu(f) / bareCpu).toFixed(1)}x`, 13)} | ${pad(busy(f), 10)} | ${pad(`${s.p99}, ${f.p99}`, 10)} |`);
    }
  }
  console.log('');
  for (const { label, verdict } of floorVerdicts(service, floor, bare, connections)) console.log(`${pad(verdict === 'reachable' ? verdict : verdict.toUpperCase(), 12)}  ${label}`);
}
