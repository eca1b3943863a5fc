// vitest settings for suites run under Deno: threads (Deno has worker
// threads; the forks pool would start Node-flavoured child processes).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/runtime/node-sqlite-store.ts'],
    pool: 'threads',
    setupFiles: ['test/runtime/deno-worker-shim.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
