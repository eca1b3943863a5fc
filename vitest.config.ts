// Test runner settings: real servers and SQLite files per test file, so
// files run in separate processes and get generous time on a busy machine.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
