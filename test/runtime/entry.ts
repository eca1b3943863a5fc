// What every runtime's test server entry does: storage under GRAPHRUN_DATA,
// the service (token from GRAPHRUN_TOKEN, none if empty), the runtime's own
// server on a free port, its URL printed as `listening on <url>`; it stops on
// SIGTERM or when its stdin closes (the test process went away).
import process from 'node:process';
import { join } from 'node:path';
import { createService, silentLogger, type Service, type Storage } from '../../core/index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import type { BlobStore } from '../../storage/types.ts';

export interface RuntimeEntry {
  storage(filename: string, blobs: BlobStore): Promise<Storage>;
  serve(service: Service): Promise<{ url: string; stop(): Promise<void> }>;
}

export async function runEntry(entry: RuntimeEntry): Promise<void> {
  const dir = process.env.GRAPHRUN_DATA;
  if (!dir) throw new Error('GRAPHRUN_DATA must name a directory');
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await entry.storage(join(dir, 'graphrun.db'), blobs);
  const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, token: process.env.GRAPHRUN_TOKEN || undefined });
  const server = await entry.serve(service);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    await service.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.on('close', () => void stop());
  process.stdin.resume();
  console.log(`listening on ${server.url}`);
}
