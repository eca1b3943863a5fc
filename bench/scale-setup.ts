// What bench/scale.ts and its runner processes (bench/scale-runner.ts) share:
// where one case keeps its data and how every process opens it, the
// accounts (with their keys, so that no process's start replaces the
// others'), the trivial job, and the messages between the bench and a
// runner.
import { join } from 'node:path';
import type { Storage } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createS3BlobStore } from '../storage/s3/blob-store.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

export type ScaleStorage =
  | { kind: 'sqlite'; dir: string }
  | {
      kind: 'postgres';
      url: string;
      s3: { endpoint: string; bucket: string; prefix: string; accessKeyId: string; secretAccessKey: string };
    };

/** The same storage in every process of a case: SQLite + blob files in one folder, or PostgreSQL + an S3 prefix. */
export async function openScaleStorage(config: ScaleStorage): Promise<Storage & { close(): Promise<void> }> {
  if (config.kind === 'sqlite') {
    const blobs = await createFsBlobStore({ dir: join(config.dir, 'blobs') });
    return createSqliteStorage({ filename: join(config.dir, 'graphrun.db'), blobs });
  }
  const { endpoint, bucket, prefix, accessKeyId, secretAccessKey } = config.s3;
  const blobs = await createS3BlobStore({ endpoint, bucket, prefix, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey } });
  return createPostgresStorage({ connectionString: config.url, blobs });
}

/**
 * Eight accounts of tier `pro` (5 parallel jobs each by the default tier
 * limits, which the runners apply): 40 slots, against the 8 jobs two
 * runners of maxConcurrentJobs 4 run at once, so the runners bound the
 * throughput, not the tiers.
 */
export const ACCOUNTS = Array.from({ length: 8 }, (_, i) => ({ id: `bench-${i}`, tier: 'pro', apiKeys: [`key-${i}`] }));
export const TIER_SLOTS = ACCOUNTS.length * 5;
/** The runners' createService default. */
export const RUNNER_CONCURRENCY = 4;

/** EmptyImage 8x8 -> SaveImage: about a millisecond in the engine, one small PNG output (a new blob: the colour differs per job). */
export const trivialWorkflow = (color: number) => ({
  e: { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: color & 0xffffff } },
  s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'scale' } },
});

export type ToRunner = { type: 'stop' };
export type FromRunner = { type: 'ready' } | { type: 'stopped' } | { type: 'error'; message: string };

/** Errors only, on stderr: a bench prints its figures, not the service's routine log. */
export const errorLogger = (who: string) => ({
  info() {},
  warn() {},
  error(message: string, fields?: Record<string, unknown>) {
    process.stderr.write(`${who}: ${message} ${fields ? JSON.stringify(fields) : ''}\n`);
  },
});
