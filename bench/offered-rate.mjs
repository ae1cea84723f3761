// Latency of a row run at a fixed offered rate (autocannon's overallRate), corrected for coordinated omission at the
// interval the load really has.
//
// autocannon corrects a rate-limited row by recording, for a response of L ms, the values L - I, L - 2I, ... >= I as
// well, with I = Math.ceil(1 / rate) where rate is the requests a connection sends *a second*: I is 1 ms whatever the
// rate, so every response counts as many samples as it lasted ms (25 ms: 25, 24, ..., 1; 4 ms: 4, 3, 2, 1), a quantile
// of time rather than of requests, which one pause can move either way. The interval the correction assumes is the time between two
// requests of one connection: 1000 * connections / overallRate ms (20 ms for 500 req/s over 10 connections). This
// module records every 2xx response's own latency and applies the correction with that interval, as HdrHistogram's
// recordValueWithExpectedInterval does; the row keeps autocannon's figure beside it.

/** The interval, in ms, between two requests of one connection at `overallRate` req/s over `connections`. */
export function offeredInterval({ connections, overallRate }) {
  return (1000 * connections) / overallRate;
}

/** Every latency, plus the samples a request that waited longer than `interval` kept the later ones from giving. */
export function correctedSamples(latencies, interval) {
  const samples = [];
  for (const l of latencies) {
    samples.push(l);
    for (let missing = l - interval; missing >= interval; missing -= interval) samples.push(missing);
  }
  return samples;
}

/** The q-quantile (0..1) of `values`, nearest rank, rounded to the ms as autocannon's table is. */
export function quantile(values, q) {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);
}

/**
 * Listens to an autocannon instance's responses; `summary()` after it ended answers the p50 and p99 corrected at the
 * offered interval, the uncorrected p99, and how many responses took 20 ms or more.
 */
export function recordOfferedRate(instance, options) {
  const latencies = [];
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  return {
    summary() {
      const interval = offeredInterval(options);
      const samples = correctedSamples(latencies, interval);
      return {
        interval,
        responses: latencies.length,
        p50: quantile(samples, 0.5),
        p99: quantile(samples, 0.99),
        rawP99: quantile(latencies, 0.99),
        over20ms: latencies.filter((l) => l >= 20).length,
      };
    },
  };
}
