// Blob files a crash left without their row (the bytes were published, the
// row never written) are removed at start and by the sweep once older than
// the grace period, and counted in the log; files with a row, and files too
// young to judge, stay.
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createService, type Logger, type Service } from '../index.ts';
import { createFsBlobStore, type FsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { uploadForm } from './helpers/harness.ts';

const HOUR = 3600_000;
let dir: string;
let services: Service[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-orphans-'));
});
afterEach(async () => {
  await Promise.all(services.map((s) => s.close()));
  services = [];
  await rm(dir, { recursive: true, force: true });
});

/** What a crash between the link and the row leaves: the bytes under their key, no row. */
async function leaveOrphan(blobs: FsBlobStore, key: string, ageMs: number): Promise<string> {
  const writer = await blobs.begin();
  await writer.write(new TextEncoder().encode(`orphan ${key}`));
  await writer.commit(key);
  const path = join(dir, 'blobs', key.slice(0, 2), key);
  const at = new Date(Date.now() - ageMs);
  await utimes(path, at, at);
  return path;
}

function recordingLogger(): Logger & { infos: Array<[string, Record<string, unknown> | undefined]> } {
  const infos: Array<[string, Record<string, unknown> | undefined]> = [];
  return { infos, info: (m, f) => void infos.push([m, f]), warn() {}, error() {} };
}

async function start(options: { sweepIntervalMs: number; logger: Logger }) {
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  // Every blob a file (no inline blobs): these tests age and leave files (assets-inline-blobs.test.ts sweeps inline ones).
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, inlineBlobBytes: 0 });
  const service = await createService({ storage, ...options });
  services.push(service);
  return { service, blobs };
}

describe('blob files without a row', () => {
  it('the sweep removes those past the grace period, keeps the young ones and those with a row, and logs the count', async () => {
    const logger = recordingLogger();
    const { service, blobs } = await start({ sweepIntervalMs: 0, logger });
    const up = await service.fetch(
      new Request('http://x/api/v2/assets', { method: 'POST', body: uploadForm('kept bytes', { content_type: 'text/plain' }, 'kept.txt') }),
    );
    expect(up.status).toBe(201);
    const kept = (await up.json()) as { id: string; hash: string };
    const keptKey = kept.hash.slice('blake3:'.length);
    // An uploaded blob as old as an orphan: its row keeps it.
    await utimes(join(dir, 'blobs', keptKey.slice(0, 2), keptKey), new Date(Date.now() - 2 * HOUR), new Date(Date.now() - 2 * HOUR));
    const old = await leaveOrphan(blobs, 'aaaaorphanold', 2 * HOUR);
    const young = await leaveOrphan(blobs, 'bbbborphanyoung', 60_000);

    expect((await service.sweep()).orphans_removed).toBe(1);
    expect(await blobs.has('aaaaorphanold')).toBe(false);
    expect(await blobs.has('bbbborphanyoung')).toBe(true);
    expect(await blobs.has(keptKey)).toBe(true);
    expect(logger.infos).toContainEqual(['removed blob files that had no row', { count: 1, grace_seconds: 3600 }]);
    expect(old).not.toBe(young);
    // The asset still serves its bytes.
    const content = await service.fetch(new Request(`http://x/api/v2/assets/${kept.id}/content`));
    expect(await content.text()).toBe('kept bytes');
  });

  it('at start, a service that sweeps removes what the last run left', async () => {
    const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
    await leaveOrphan(blobs, 'ccccorphanstart', 2 * HOUR);
    const logger = recordingLogger();
    const { service, blobs: reopened } = await start({ sweepIntervalMs: 60_000, logger });
    await service.idle();
    expect(await reopened.has('ccccorphanstart')).toBe(false);
    expect(logger.infos).toContainEqual(['removed blob files that had no row', { count: 1, grace_seconds: 3600 }]);
  });
});
