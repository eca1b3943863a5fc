// The storage both halves of the Lambda deployment open (examples/lambda.ts
// answers the API, examples/lambda-worker.ts runs the jobs): the one seam to
// change when they move to storage shared over the network.
//
// Lambda's only writable disk is /tmp, so GRAPHRUN_DATA defaults to
// /tmp/graphrun. That disk belongs to one execution environment, and SQLite
// in WAL mode wants every process that opens the file on the same machine:
// as is, the pair works where both run on one host (the function run locally
// beside the worker, or tests). Spread over hosts, openStorage() returns the
// scale-out storage instead; nothing else in either file changes.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Storage } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

export const dataDir = process.env.GRAPHRUN_DATA || '/tmp/graphrun';

export async function openStorage(): Promise<Storage> {
  await mkdir(dataDir, { recursive: true });
  const blobs = await createFsBlobStore({ dir: join(dataDir, 'blobs') });
  return createSqliteStorage({ filename: join(dataDir, 'graphrun.db'), blobs });
}
