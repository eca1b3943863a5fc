// Child process of bench/worker.ts: graphrun as `graphrun serve --worker ...`
// sets it up (SQLite + fs blobs in the directory argv[2], the worker engine on
// the worker URLs argv[3..], as many jobs at once as there are workers, native
// blake3) behind the Node server. It reports its URL once the engine has seen a worker.
// BENCH_STORAGE swaps either half of the storage for memory, to show what each
// costs per job (the targets judge the default): `memory` (both halves),
// `sqlite+memory-blobs`, `memory+fs-blobs`. On SQLite the job's small output
// is a row either way (inline blobs); `sqlite+fs-blobs-only` keeps the
// default's storage but stores every output as a file.
import { join } from 'node:path';
import type { BlobStore, Storage } from '../storage/types.ts';
import { benchFrom, benchStorage } from './worker-clients.ts';

// The built package by its own name, as an application that installed it imports it (its
// exports map): what is shipped is what is measured. With BENCH_FROM=source, the TypeScript
// sources through tsx.
const fromSource = benchFrom() === 'source';
const [
  { createNativeHasher, serve },
  { createComfyEngine },
  { consoleLogger, createService },
  { createFsBlobStore },
  memory,
  { createSqliteStorage },
] = await Promise.all([
  import(fromSource ? '../adapters/node/index.ts' : 'graphrun/adapters/node') as Promise<typeof import('../adapters/node/index.ts')>,
  import(fromSource ? '../engine/comfyui/engine.ts' : 'graphrun/engine/comfyui') as Promise<typeof import('../engine/comfyui/engine.ts')>,
  import(fromSource ? '../index.ts' : 'graphrun') as Promise<typeof import('../index.ts')>,
  import(fromSource ? '../storage/fs/blob-store.ts' : 'graphrun/storage/fs') as Promise<typeof import('../storage/fs/blob-store.ts')>,
  import(fromSource ? '../storage/memory/index.ts' : 'graphrun/storage/memory') as Promise<typeof import('../storage/memory/index.ts')>,
  import(fromSource ? '../storage/sql/sqlite.ts' : 'graphrun/storage/sqlite') as Promise<typeof import('../storage/sql/sqlite.ts')>,
]);
const { createMemoryBlobStore, createMemoryMetadataStore } = memory;

export type ServerMessage = { type: 'ready'; url: string } | { type: 'cpu'; micros: number } | { type: 'error'; message: string };
export type ServerRequest = { type: 'cpu' } | { type: 'stop' };

const [dir, ...workers] = process.argv.slice(2);
if (dir === undefined || workers.length === 0 || !process.send)
  throw new Error('run by bench/worker.ts: fork with IPC; argv: a data directory, worker URLs');
const send = (message: ServerMessage) => process.send!(message);

const kind = benchStorage();
const blobs: BlobStore = kind.includes('fs-blobs') ? await createFsBlobStore({ dir: join(dir, 'blobs') }) : createMemoryBlobStore();
const storage: Storage = kind.startsWith('sqlite')
  ? await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, ...(kind.endsWith('-only') && { inlineBlobBytes: 0 }) })
  : { metadata: createMemoryMetadataStore(), blobs };
const engine = createComfyEngine({ workers });
// The console logger only writes warnings and errors: a quiet run is a clean one.
// The local account's tier ('default') runs one job at a time by default: here one per worker, so
// both workers are busy, as they are on the direct path.
const service = await createService({
  storage,
  engine,
  logger: consoleLogger,
  maxConcurrentJobs: workers.length,
  tierLimits: { default: workers.length },
  // As `graphrun serve` hashes (adapters/node/cli-service.ts).
  hasher: createNativeHasher,
});
const running = await serve(service, { port: 0, logger: consoleLogger });

try {
  const until = Date.now() + 10_000;
  while (engine.readiness().state !== 'ready') {
    if (Date.now() > until) throw new Error(`the engine is not ready after 10 s: ${JSON.stringify(engine.readiness())}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  send({ type: 'ready', url: running.url });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
}

process.on('message', async (message: ServerRequest) => {
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    send({ type: 'cpu', micros: user + system });
  } else if (message.type === 'stop') {
    await running.close();
    await service.close();
    process.exit(0);
  }
});
