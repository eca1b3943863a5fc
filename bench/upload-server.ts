// Child process of bench/upload.ts: serves the service (SQLite + fs blobs in
// the directory given as argv[2], SQLite + blobs in the S3 bucket at the
// endpoint given as argv[4], or memory storage) and samples its own RSS every
// 10 ms, so the figure the benchmark reports belongs to the server alone.
// Hashes with the native blake3 `graphrun serve` uses; BENCH_HASHER=wasm with
// the core's hash-wasm default instead.
import { join } from 'node:path';
import { createNativeHasher } from '../adapters/node/native-hasher.ts';
import { serve } from '../adapters/node/server.ts';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { createS3BlobStore } from '../storage/s3/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

import { serveParent } from './upload-child.ts';

const dir = process.argv[2];
if (dir === undefined || !process.send) throw new Error('run by bench/upload.ts: fork with IPC and a data directory');

// argv[3] = 'memory' runs the diagnostic variant: the same path without the disk;
// 's3' keeps the blobs in the bucket argv[5] of the S3 server at argv[4] (s3rver's credentials).
const blobsOf = async () =>
  process.argv[3] === 's3'
    ? createS3BlobStore({
        bucket: process.argv[5]!,
        prefix: 'upload/',
        endpoint: process.argv[4]!,
        region: 'us-east-1',
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      })
    : createFsBlobStore({ dir: join(dir, 'blobs') });
const storage =
  process.argv[3] === 'memory' ? createMemoryStorage() : await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs: await blobsOf() });
const hasher = process.env.BENCH_HASHER === 'wasm' ? undefined : createNativeHasher;
const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, hasher });
const running = await serve(service, { port: 0, logger: silentLogger });

serveParent(running.url, async () => {
  await running.close();
  await service.close();
});
