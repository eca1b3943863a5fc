// Opens the storage the CLI's flags describe: SQLite or PostgreSQL for the
// metadata, files or an S3 bucket for the blobs, in any combination. Storage
// that cannot be reached fails here, at start, with a message naming it,
// rather than on the first request or job.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createS3BlobStore } from '../../storage/s3/blob-store.ts';
import { createPostgresStorage } from '../../storage/sql/postgres.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import type { BlobStore, Storage } from '../../storage/types.ts';
import { type BlobsCliOption, redactUrl, type StorageCliOptions } from './cli-storage-options.ts';

export type CliStorage = Storage & { close(): Promise<void> };

/** Storage that could not be opened or reached: the CLI prints the message and exits 1. */
export class StorageStartError extends Error {
  override name = 'StorageStartError';
}

/** An error's message with what lies under it: fetch says only "fetch failed", and a refused connection may be an AggregateError without a message. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const nested = e instanceof AggregateError ? e.errors[0] : undefined;
    const message = e instanceof Error ? e.message || (nested instanceof Error ? nested.message : '') || e.name : String(e);
    if (message && !parts.includes(message)) parts.push(message);
  }
  return parts.join(': ') || 'unknown error';
}

/** How the logs name the storage: the database without its password, and the blobs' place. */
export function describeStorage({ data, database, blobs, schema }: StorageCliOptions): string {
  const inSchema = schema === undefined ? '' : ` (schema ${schema})`;
  const metadata = database ? `PostgreSQL ${redactUrl(database)}${inSchema}` : `SQLite ${join(data, 'graphrun.db')}`;
  const files = !blobs ? join(data, 'blobs') : blobs.kind === 'dir' ? blobs.dir : `s3://${blobs.bucket}/${blobs.prefix}`;
  return `${metadata}, blobs in ${files}`;
}

async function openBlobs(option: BlobsCliOption | undefined, data: string): Promise<BlobStore> {
  if (!option) {
    await mkdir(data, { recursive: true });
    return createFsBlobStore({ dir: join(data, 'blobs') });
  }
  if (option.kind === 'dir') return createFsBlobStore({ dir: option.dir });
  const place = `s3://${option.bucket}/${option.prefix}`;
  const store = await createS3BlobStore({ bucket: option.bucket, prefix: option.prefix, ...option.env }).catch((err: unknown) => {
    throw new StorageStartError(`cannot use the S3 bucket ${place}: ${describeError(err)}`);
  });
  // One listing request: it fails for an unreachable endpoint, a missing bucket or refused credentials, where a
  // HEAD of some key would answer a bare 404 for a missing bucket. Nothing is listed beyond its first page.
  try {
    for await (const _ of store.list()) break;
  } catch (err) {
    const endpoint = option.env.endpoint ? ` at ${option.env.endpoint}` : '';
    throw new StorageStartError(`cannot reach the S3 bucket ${place}${endpoint}: ${describeError(err)}`);
  }
  return store;
}

export async function openCliStorage(options: StorageCliOptions): Promise<CliStorage> {
  const blobs = await openBlobs(options.blobs, options.data);
  try {
    if (options.database) {
      // Any number of runners share the database: each holds the jobs it runs under a lease (jobLeaseSeconds).
      // A schema (a deployment's) is created by the first migration if absent.
      return await createPostgresStorage({ connectionString: options.database, schema: options.schema, blobs }).catch((err: unknown) => {
        const missingDriver = (err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && /'pg'/.test(String((err as Error).message));
        const why = missingDriver ? 'the "pg" package is not installed (npm install pg)' : describeError(err);
        throw new StorageStartError(`cannot open the PostgreSQL database ${redactUrl(options.database!)}: ${why}`);
      });
    }
    await mkdir(options.data, { recursive: true });
    return await createSqliteStorage({ filename: join(options.data, 'graphrun.db'), blobs });
  } catch (err) {
    await blobs.close?.();
    throw err;
  }
}
