// A child process for the crash tests (test/jobs-durability.test.ts): the
// service on SQLite + filesystem blobs under a data directory, exactly as
// the CLI lays them out, with the test nodes, one account (key `k`, tier
// creator) allowed 2 jobs at once. It prints `{"url": "..."}` on stdout once
// listening; the test kills it with SIGKILL, so it has no shutdown path.
//
//   node --import tsx test/helpers/durability-server.ts <data-dir>
//   env DURABILITY_DATA=<data-dir> (when no argument), DURABILITY_INTERRUPTED_JOBS=rerun|fail
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve } from '../../adapters/node/server.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import { createService } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import { createTestNodes } from './local-nodes.ts';

const data = process.argv[2] ?? process.env.DURABILITY_DATA;
if (!data) {
  process.stderr.write('durability-server: give the data directory as the argument or DURABILITY_DATA\n');
  process.exit(2);
}
const policy = process.env.DURABILITY_INTERRUPTED_JOBS || 'rerun';
if (policy !== 'rerun' && policy !== 'fail') {
  process.stderr.write(`durability-server: DURABILITY_INTERRUPTED_JOBS must be rerun or fail, got "${policy}"\n`);
  process.exit(2);
}

await mkdir(data, { recursive: true });
const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
const storage = await createSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
const service = await createService({
  storage,
  sweepIntervalMs: 0,
  accounts: [{ id: 'a', tier: 'creator', apiKeys: ['k'] }],
  tierLimits: { creator: 2 },
  interruptedJobs: policy,
  engine: createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] }),
});
const running = await serve(service, { host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url: running.url })}\n`);
