// One setting on against off in the same run (the insights rollup, metrics): two service processes started for the
// comparison on the same database, one with the setting on and one with it off, alike in everything else (neither
// carries the heap, cache and history of the rows measured before it, as the bench's first process does, which the on
// side was until issue 36). With the first process the three split the 64
// partition slots, so each side measures only codes whose slot it holds itself (nothing forwarded). Runs in the order
// on, off, off, on per round, so that a drift of the machine weighs on both alike; both then stop and the first process
// takes every slot back.
import { randomBytes } from 'node:crypto';
import { freePort } from './support.mjs';

const alnum = (n) => {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(n), (b) => chars[b % chars.length]).join('');
};

/** The engine's slot of a code (FNV-1a of workspace id and code, mod 64): which process decides it. */
function slotOf(workspaceId, code) {
  let hash = 0x811c9dc5;
  const key = `${workspaceId}\u0000${code}`;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % 64;
}

/** The slots a service's process holds, once `members` processes have split the 64 (⌊64 / members⌋ or one more each). */
export async function heldSlots(url, members = 2) {
  for (let i = 0; i < 80; i++) {
    const leases = (await (await fetch(`${url}/ready`)).json()).checks?.partitions?.leases;
    if (leases && leases.members === members && leases.owned.length >= Math.floor(64 / members) && leases.owned.length <= Math.ceil(64 / members)) return new Set(leases.owned);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not settle on ${64 / members} slots`);
}

/** The partitions' commit figures of a process, for the time per commit and writes per batch of one run alone. */
async function commits(url) {
  const ready = await (await fetch(`${url}/ready`)).json();
  const partitions = ready.checks?.partitions?.partitions ?? [];
  return partitions.reduce((a, p) => ({ batches: a.batches + p.batches, ms: a.ms + p.batches * p.averageCommitMs, writes: a.writes + p.batches * p.averageBatch }), { batches: 0, ms: 0, writes: 0 });
}

/**
 * `setting`: its name in the rows (`rollup`, `metrics`) and the environment that turns it off. `scenarios`: any of
 * `validate` (one hot code), `hot` (redeem one hot code), `spread` (redeem over the 10,000 codes of each process).
 */
export async function compareSetting(setting, scenarios, ctx) {
  const { env, databaseUrl, baseUrl, auth, orderBody, spread, spreadOff, startService, api, load, warmUp, rounds } = ctx;
  const started = async (extra) => {
    const port = await freePort();
    const service = await startService({ ...env, DATABASE_URL: databaseUrl, PORT: String(port), WORKER_HEALTH_PORT: String(await freePort()), ...extra });
    return { service, url: `http://127.0.0.1:${port}` };
  };
  const on = await started({});
  const off = await started(setting.offEnv);
  const [onSlots, offSlots] = [await heldSlots(on.url, 3), await heldSlots(off.url, 3)];
  const { id: workspaceId } = await api('GET', '/workspace');
  const ownCode = async (prefix, slots, body) => {
    let code;
    do code = `${prefix}-${alnum(6)}`;
    while (!slots.has(slotOf(workspaceId, code)));
    await api('POST', '/vouchers', { code, ...body });
    return code;
  };
  const hotBody = { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, currency: 'EUR', redemptionLimit: 2_000_000_000 };
  const validateBody = { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } };
  const sides = {
    on: { url: on.url, pid: on.service.child.pid, spread: spread.filter((code) => onSlots.has(slotOf(workspaceId, code))), slots: onSlots },
    off: { url: off.url, pid: off.service.child.pid, spread: spreadOff.filter((code) => offSlots.has(slotOf(workspaceId, code))), slots: offSlots },
  };
  for (const [side, s] of Object.entries(sides)) {
    s.hot = await ownCode(`HOT-${setting.name}-${side}`.toUpperCase(), s.slots, hotBody);
    s.validate = await ownCode(`VAL-${setting.name}-${side}`.toUpperCase(), s.slots, validateBody);
  }
  console.error(`${setting.name} comparison: each process measures its own codes (${sides.on.spread.length} and ${sides.off.spread.length} of the 10,000 of each spread)`);
  const requestOf = {
    validate: { name: 'validate, hot code', options: (s) => ({ url: `${s.url}/api/v1/vouchers/${s.validate}/validate`, headers: auth, body: orderBody }) },
    hot: { name: 'redeem, one hot code', options: (s) => ({ url: `${s.url}/api/v1/vouchers/${s.hot}/redemption`, headers: auth, body: orderBody }) },
    spread: {
      name: 'redeem over 10,000 codes',
      options: (s) => ({ url: s.url, headers: auth, requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, path: `/api/v1/vouchers/${s.spread[Math.floor(Math.random() * s.spread.length)]}/redemption`, body: orderBody }) }] }),
    },
  };
  const measured = async (side, scenario, label) => {
    const s = sides[side];
    const before = await commits(s.url);
    // With the process's pid: the CPU its web thread took a request, steadier than req/s on a busy machine.
    const row = await load(`${setting.name} ${side}: ${scenario.name} ${label}`, scenario.options(s), s.pid);
    const after = await commits(s.url);
    const batches = after.batches - before.batches;
    return { ...row, commitMs: batches ? (after.ms - before.ms) / batches : 0, perBatch: batches ? (after.writes - before.writes) / batches : 0 };
  };
  const rows = [];
  for (const key of scenarios) {
    const scenario = requestOf[key];
    const row = { name: scenario.name, on: [], off: [] };
    // Both processes warmed on the scenario's codes first: the first measured run is on's, and must not be its cold run.
    for (const side of ['on', 'off']) await warmUp(`${setting.name} ${side}: ${scenario.name} (warm-up)`, scenario.options(sides[side]));
    for (let round = 1; round <= rounds; round++) {
      row.on.push(await measured('on', scenario, `(${2 * round - 1})`));
      row.off.push(await measured('off', scenario, `(${2 * round - 1})`));
      row.off.push(await measured('off', scenario, `(${2 * round})`));
      row.on.push(await measured('on', scenario, `(${2 * round})`));
    }
    rows.push(row);
  }
  // The rows after this one measure the first process alone again: it takes all 64 slots back.
  await on.service.stop();
  await off.service.stop();
  await heldSlots(baseUrl, 1);
  return rows;
}

/**
 * On/off of each round's adjacent runs (on 1 with off 1, off 2 with on 2, …): neighbours in time see the same machine,
 * so their ratio cancels its drift; the median of those ratios is what one hiccup (a run at half speed) cannot move.
 */
export function pairedRatios(on, off, field = 'rps') {
  const ratios = [];
  for (let i = 0; i < Math.min(on.length, off.length); i++) if (off[i][field]) ratios.push(on[i][field] / off[i][field]);
  return ratios;
}

export const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The comparison's table, the runs of each row, and whether the setting costs less than `limit` (0.05: 5 %): by the
 * median of the paired on/off ratios of req/s (the mean of all runs is printed beside it).
 */
export function printComparison(title, setting, rows, check, limit = 0.05) {
  if (!rows.length) return;
  const pad = (s, n) => String(s).padEnd(n);
  const mean = (runs, field) => runs.reduce((a, x) => a + x[field], 0) / runs.length;
  console.log(`\n${title}, same run, order on, off, off, on:\n`);
  console.log(`| ${pad('scenario', 26)} | ${pad(`${setting} on req/s`, 18)} | ${pad(`${setting} off req/s`, 19)} | ${pad('on/off means', 12)} | ${pad('on/off paired median', 20)} | ${pad('p99 on/off ms', 13)} | ${pad('web thread µs on/off', 20)} | ${pad('ms per commit on/off', 20)} | ${pad('writes per batch on/off', 23)} |`);
  console.log(`|${'-'.repeat(28)}|${'-'.repeat(20)}|${'-'.repeat(21)}|${'-'.repeat(14)}|${'-'.repeat(22)}|${'-'.repeat(15)}|${'-'.repeat(22)}|${'-'.repeat(22)}|${'-'.repeat(25)}|`);
  const web = (runs) => (runs.every((x) => x.cpu) ? median(runs.map((x) => x.cpu.web)).toFixed(0) : '-');
  for (const r of rows) {
    const on = Math.round(mean(r.on, 'rps'));
    const off = Math.round(mean(r.off, 'rps'));
    const paired = median(pairedRatios(r.on, r.off));
    const commit = `${mean(r.on, 'commitMs').toFixed(2)}/${mean(r.off, 'commitMs').toFixed(2)}`;
    const perBatch = `${mean(r.on, 'perBatch').toFixed(1)}/${mean(r.off, 'perBatch').toFixed(1)}`;
    console.log(`| ${pad(r.name, 26)} | ${pad(on, 18)} | ${pad(off, 19)} | ${pad(off ? (on / off).toFixed(3) : '-', 12)} | ${pad(Number.isFinite(paired) ? paired.toFixed(3) : '-', 20)} | ${pad(`${Math.max(...r.on.map((x) => x.p99))}/${Math.max(...r.off.map((x) => x.p99))}`, 13)} | ${pad(`${web(r.on)}/${web(r.off)}`, 20)} | ${pad(commit, 20)} | ${pad(perBatch, 23)} |`);
    console.log(`    runs on: ${r.on.map((x) => x.rps).join(', ')}; off: ${r.off.map((x) => x.rps).join(', ')}; paired on/off: ${pairedRatios(r.on, r.off).map((x) => x.toFixed(2)).join(', ')}`);
    if (Number.isFinite(paired)) check(`${r.name}: ${setting} on costs less than ${limit * 100} % (${((1 - paired) * 100).toFixed(1)} % by the paired median)`, paired >= 1 - limit);
  }
}
