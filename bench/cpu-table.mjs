// The bench's CPU table: what each request cost (from /proc during the measured seconds), as a multiple of bare
// node:http's own CPU a request (the cheapest HTTP answer on this machine), and the most this machine's CPUs allow at
// that cost (the ceiling each throughput target is judged against); then the checks of issues 19 and 36 on it.
import os from 'node:os';

const pad = (s, n) => String(s).padEnd(n);
const times = (x) => `${x < 1 ? x.toFixed(2) : x.toFixed(1)}x`;

/**
 * The most `cores` CPUs serve at a row's cost: every part on every CPU, and with one web process (the bench's default)
 * its one web thread at most 1 s of CPU a second.
 */
export function ceilingOf(row, cores = os.availableParallelism()) {
  const { service, web, postgres, load: generator } = row.cpu;
  const allCpus = (cores * 1e6) / (service + postgres + generator);
  const oneWebThread = (process.env.WEB_PROCESSES ?? '1') === '1' && web > 0;
  const ceiling = Math.round(oneWebThread ? Math.min(allCpus, 1e6 / web) : allCpus);
  return { ceiling, bound: ceiling < Math.round(allCpus) ? 'web thread' : 'all CPUs', allCpus };
}

/**
 * `rows`: the bench's rows by name (each with `cpu` when measured). Prints one line a measured service row, then the
 * issue 19 targets against their ceilings and the issue 36 targets (ratios within this run), through `check`.
 */
export function printCpuTable(rows, check) {
  const { bare, peerHot, peerSpread, peerCheckout, validate, hot, hotKeyed, hotReturning, checkout, hotNew, spreadRow, gift, points, stack } = rows;
  const cores = os.availableParallelism();
  // Issue 19's targets: each row against its reference, judged against the ceiling too.
  const targets = new Map([
    [hot, [peerHot, 10, 'the peer']], [spreadRow, [peerSpread, 8, 'the peer']], [gift, [peerHot, 15, 'the peer']], [stack, [peerHot, 8, 'the peer']], [validate, [bare, 0.5, 'node:http']],
  ]);
  const measured = [validate, hot, hotKeyed, hotReturning, checkout, hotNew, spreadRow, gift, points, stack].filter((r) => r?.cpu && r.rps);
  if (!measured.length) return;
  const bareCpu = bare.cpu && bare.rps ? bare.cpu.service : undefined;
  console.log(`\nCPU a request (µs, from /proc during the measured seconds), its multiple of bare node:http's, and the most ${cores} CPUs allow at that cost:\n`);
  console.log(`| ${pad('scenario', 42)} | ${pad('service (web thread)', 20)} | ${pad('PostgreSQL', 10)} | ${pad('load gen', 8)} | ${pad('x bare: service (+PG)', 21)} | ${pad('CPUs busy', 9)} | ${pad('ceiling req/s', 13)} | ${pad('of ceiling', 10)} | ${pad('issue 19: ceiling ratio', 32)} | ${pad('target', 6)} | ${pad('the target needs', 26)} |`);
  console.log(`|${'-'.repeat(44)}|${'-'.repeat(22)}|${'-'.repeat(12)}|${'-'.repeat(10)}|${'-'.repeat(23)}|${'-'.repeat(11)}|${'-'.repeat(15)}|${'-'.repeat(12)}|${'-'.repeat(34)}|${'-'.repeat(8)}|${'-'.repeat(28)}|`);
  if (bare.cpu) {
    const { service, web, load: generator } = bare.cpu;
    console.log(`| ${pad(bare.name, 42)} | ${pad(`${service} (${web})`, 20)} | ${pad(0, 10)} | ${pad(generator, 8)} | ${pad('1.0x', 21)} | ${pad(`${Math.round((bare.rps * (service + generator)) / (cores * 1e6) * 100)} %`, 9)} | ${pad('', 13)} | ${pad('', 10)} | ${pad('', 32)} | ${pad('', 6)} | ${pad('', 26)} |`);
  }
  for (const row of measured) {
    const { service, web, postgres, load: generator } = row.cpu;
    const { ceiling, bound } = ceilingOf(row, cores);
    const busy = (row.rps * (service + postgres + generator)) / (cores * 1e6);
    const multiple = bareCpu ? `${times(service / bareCpu)} (${times((service + postgres) / bareCpu)})` : '-';
    const target = targets.get(row);
    let judged = ['', '', ''];
    if (target && target[0].rps) {
      const [reference, factor, against] = target;
      const goal = factor * reference.rps;
      judged = [`${times(ceiling / reference.rps)} ${against} (${bound})`, times(factor), bound === 'web thread' ? `web thread <= ${Math.floor(1e6 / goal)} µs` : `all parts <= ${Math.floor((cores * 1e6) / goal)} µs`];
    }
    console.log(
      `| ${pad(row.name, 42)} | ${pad(`${service} (${web})`, 20)} | ${pad(postgres, 10)} | ${pad(generator, 8)} | ${pad(multiple, 21)} | ${pad(`${Math.round(busy * 100)} %`, 9)} | ${pad(ceiling, 13)} | ${pad(`${Math.round((row.rps / ceiling) * 100)} %`, 10)} | ${pad(judged[0], 32)} | ${pad(judged[1], 6)} | ${pad(judged[2], 26)} |`,
    );
  }
  printIssue36(rows, bareCpu, check);
}

/** Issue 36's targets, each a ratio within this run. */
function printIssue36({ peerCheckout, validate, hot, hotKeyed, hotReturning, checkout, hotNew, spreadRow, gift, points, stack }, bareCpu, check) {
  console.log('');
  const ratio = (a, b) => (a?.rps && b?.rps ? a.rps / b.rps : undefined);
  const against = (label, a, b, goal) => {
    const r = ratio(a, b);
    if (r !== undefined) check(`${label} >= ${goal}x (${r.toFixed(2)}x: ${a.rps} / ${b.rps} req/s)`, r >= goal);
  };
  against('checkout (key, returning customer, 3 items) against the bare hot redeem', checkout, hot, 0.8);
  against('checkout against the naive peer doing the same', checkout, peerCheckout, 10);
  against('hot redeem with an Idempotency-Key against the bare hot redeem', hotKeyed, hot, 0.9);
  if (hotReturning?.rps && hot.rps) console.log(`info  hot redeem, returning customer, against the bare hot redeem: ${(hotReturning.rps / hot.rps).toFixed(2)}x`);
  against('hot redeem, new customer, against the bare hot redeem', hotNew, hot, 0.6);
  against('pay with points against the gift card, one hot card each', points, gift, 0.8);
  if (bareCpu) {
    for (const [row, goal] of [[hot, 4], [validate, 1.5]]) {
      if (!row?.cpu || !row.rps) continue;
      const multiple = (row.cpu.service + row.cpu.postgres) / bareCpu;
      check(`${row.name}: CPU a request (service and PostgreSQL) <= ${goal}x bare node:http's (${multiple.toFixed(1)}x: ${row.cpu.service + row.cpu.postgres} / ${bareCpu} µs)`, multiple <= goal);
    }
  }
  for (const row of [hot, hotKeyed, hotReturning, checkout, hotNew, spreadRow, gift, points, stack]) {
    if (row?.rps) check(`${row.name}: p99 < 20 ms (${row.p99} ms)`, row.p99 < 20);
  }
  for (const row of [spreadRow, gift, stack, validate]) {
    if (!row?.cpu || !row.rps) continue;
    const { ceiling } = ceilingOf(row);
    check(`${row.name}: >= 90 % of this machine's ceiling (${Math.round((row.rps / ceiling) * 100)} % of ${ceiling} req/s)`, row.rps >= 0.9 * ceiling);
  }
}
