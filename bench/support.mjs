// What every bench shares: a free local port, and a bounded run whose clean-ups happen however it ends.
import net from 'node:net';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `main` with a hard time limit; `cleanups` (run last-in first-out) stop what it started, on success, failure
 * or time-out. Exits the process with 0 or 1.
 */
export function runBounded(main, timeoutMs, cleanups) {
  const finish = async (code, error) => {
    if (error) console.error(error);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    process.exit(code);
  };
  const deadline = setTimeout(() => void finish(1, new Error(`bench exceeded ${timeoutMs / 1000} s`)), timeoutMs);
  main().then(
    () => {
      clearTimeout(deadline);
      return finish(0);
    },
    (error) => finish(1, error),
  );
}
