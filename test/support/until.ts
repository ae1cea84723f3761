// Waiting in tests for something another process, thread or queue brings about: a probe polled every 50 ms, bounded.

/** The probe's first truthy value; throws `<label> not reached in <timeoutMs> ms` when the time is up. */
export async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000, label = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${label} not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
