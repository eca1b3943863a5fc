// What every runtime's test server entry does: storage under GRAPHRUN_DATA,
// the service (token from GRAPHRUN_TOKEN, none if empty), the runtime's own
// server on a free port, its URL printed as `listening on <url>`; it stops on
// SIGTERM or when its stdin closes (the test process went away). Beside it,
// the deployment 'sdxl' (deployment-gateway.ts).

import { join } from 'node:path';
import process from 'node:process';
import { createService, type Service, type ServiceOptions, type Storage, silentLogger } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import type { BlobStore } from '../../storage/types.ts';
import { withSdxl } from './deployment-gateway.ts';

export interface RuntimeEntry {
  storage(filename: string, blobs: BlobStore): Promise<Storage>;
  serve(service: Service): Promise<{ url: string; stop(): Promise<void> }>;
}

/** The service on the runtime's storage under GRAPHRUN_DATA (database file and blob directory), quiet and without sweeps. */
export async function serviceUnderData(storage: RuntimeEntry['storage'], options: Partial<ServiceOptions> = {}): Promise<Service> {
  const dir = process.env.GRAPHRUN_DATA;
  if (!dir) throw new Error('GRAPHRUN_DATA must name a directory');
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  return createService({ storage: await storage(join(dir, 'graphrun.db'), blobs), logger: silentLogger, sweepIntervalMs: 0, ...options });
}

/** Runs `stop` once and exits 0 on SIGTERM or when stdin closes (the parent went away). */
export function stopWithParent(stop: () => Promise<void>): void {
  let stopping = false;
  const once = async () => {
    if (stopping) return;
    stopping = true;
    await stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void once());
  process.stdin.on('end', () => void once());
  process.stdin.on('close', () => void once());
  process.stdin.resume();
}

export async function runEntry(entry: RuntimeEntry): Promise<void> {
  const token = process.env.GRAPHRUN_TOKEN || undefined;
  const service = await withSdxl(await serviceUnderData(entry.storage, { token }), process.env.GRAPHRUN_DATA!, entry.storage, token);
  const server = await entry.serve(service);
  stopWithParent(async () => {
    await server.stop();
    await service.close();
  });
  console.log(`listening on ${server.url}`);
}
