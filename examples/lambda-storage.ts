// The storage both halves of the Lambda deployment open (examples/lambda.ts
// answers the API, examples/lambda-worker.ts runs the jobs), from the same
// variables as `graphrun serve`: GRAPHRUN_DATABASE_URL (PostgreSQL) and
// GRAPHRUN_BLOBS_URL (s3://bucket/prefix, with the standard AWS variables).
// That is the real deployment: the function and its runners on different
// hosts share the database and the bucket.
//
// Without them it falls back to SQLite and files under GRAPHRUN_DATA
// (default /tmp/graphrun, Lambda's only writable disk), which only works
// where the function and the worker share one host (`sam local`, tests):
// each Lambda environment has a /tmp of its own.
import { openCliStorage } from '../adapters/node/cli-storage.ts';
import { parseStorageOptions } from '../adapters/node/cli-storage-options.ts';
import type { Storage } from '../index.ts';

export const dataDir = process.env.GRAPHRUN_DATA || '/tmp/graphrun';
const options = parseStorageOptions({ data: dataDir }, process.env);

/** Whether blobs live in a bucket: then downloads are redirected to it (a buffered Lambda answer stops at 6 MB). */
export const blobsInBucket = options.blobs?.kind === 's3';

export function openStorage(): Promise<Storage> {
  return openCliStorage(options);
}
