// Deno's node:worker_threads has no parentPort.removeAllListeners (it throws
// ERR_NOT_IMPLEMENTED), which vitest's threads pool calls when a worker tears
// down: the error surfaces as an unhandled rejection after every case passed,
// and vitest exits 1. The worker is ending then, so listeners left in place
// are moot: the wrapper below lets that one error go and rethrows any other.
// Runs in each test worker (a setup file of vitest.deno.config.ts).
import { parentPort } from 'node:worker_threads';

if (parentPort && typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined') {
  const port = parentPort;
  const original = port.removeAllListeners.bind(port);
  port.removeAllListeners = ((...args: Parameters<typeof original>) => {
    try {
      return original(...args);
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code === 'ERR_NOT_IMPLEMENTED') return port;
      throw err;
    }
  }) as typeof port.removeAllListeners;
}
