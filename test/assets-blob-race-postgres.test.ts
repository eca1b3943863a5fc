// Two service instances on one PostgreSQL database and one blob store: an
// upload on one that finds its bytes already stored (dedup), while the other
// collects those very bytes. The collection is held at a gate between
// deleting the blob row and deleting the bytes; the upload comes in then.
// With the storage's blob locks the upload waits for the collection and
// stores the bytes again, so its asset downloads; without them (blobLocks:
// false, as every instance had before) the asset's row ends up over deleted
// bytes, which the second case shows, so the first one cannot pass by chance.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createService, type Service, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { BlobStore } from '../storage/types.ts';
import { bytesOf, randomBytes } from './helpers/assets.ts';
import { uploadForm } from './helpers/harness.ts';
import { until } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';

const server = usePostgres();
const BASE = 'http://graphrun.test';

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** `blobs`, whose delete of the first key asked waits at a gate the test opens once the delete has arrived. */
function gatedDeletes(blobs: BlobStore) {
  let arrived!: (key: string) => void;
  const reached = new Promise<string>((resolve) => (arrived = resolve));
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let gated = false;
  const store: BlobStore = {
    ...blobs,
    async delete(key) {
      if (!gated) {
        gated = true;
        arrived(key);
        await opened;
      }
      return blobs.delete(key);
    },
  };
  return { store, reached, open };
}

async function startService(connectionString: string, blobs: BlobStore, blobLocks: boolean): Promise<Service> {
  const storage = await createPostgresStorage({ connectionString, blobs, ...(!blobLocks && { blobLocks: false }) });
  const service = await createService({ storage, runJobs: false, logger: silentLogger, sweepIntervalMs: 0 });
  closing.push(() => service.close());
  return service;
}

const call = (service: Service, path: string, init?: RequestInit) => service.fetch(new Request(BASE + path, init));
async function upload(service: Service, bytes: Uint8Array) {
  const res = await call(service, '/api/v2/assets', { method: 'POST', body: uploadForm(bytes) });
  return { status: res.status, body: (await res.json()) as any };
}

/** Resolves once `done` has settled or a session of the database waits for an advisory lock. */
async function lockWaitOrDone(connectionString: string, done: Promise<unknown>) {
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  let settled = false;
  done.then(
    () => (settled = true),
    () => (settled = true),
  );
  try {
    await until(
      'the upload to wait for the blob lock or to finish',
      async () => {
        if (settled) return true;
        const { rows } = await admin.query<{ n: number }>("select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted");
        return rows[0].n > 0;
      },
      20_000,
    );
  } finally {
    await admin.end();
  }
  return settled ? 'done' : 'waiting';
}

/**
 * Instance Y uploads bytes and deletes the asset; its collection of them
 * stops at the gate, the row deleted, the bytes not yet. Instance X then
 * uploads the same bytes; once that upload has finished or waits for the
 * lock, the gate opens. Says what the upload did, and what is left.
 */
async function raceUploadWithCollection(blobLocks: boolean) {
  const url = await server.newDatabase();
  const shared = createMemoryBlobStore();
  const gated = gatedDeletes(shared);
  const x = await startService(url, shared, blobLocks);
  const y = await startService(url, gated.store, blobLocks);
  const bytes = randomBytes(4096);

  const first = await upload(y, bytes);
  expect(first.status).toBe(201);
  expect((await call(y, `/api/v2/assets/${first.body.id}`, { method: 'DELETE' })).status).toBe(204);
  const key = await gated.reached;

  const second = upload(x, bytes);
  const upload2 = await lockWaitOrDone(url, second);
  gated.open();
  await y.idle();
  const { status, body } = await second;
  expect(status).toBe(201);

  const view = await call(x, `/api/v2/assets/${body.id}`);
  expect(view.status).toBe(200);
  const content = await x.fetch(new Request(((await view.json()) as any).url));
  return { upload: upload2, key, bytes, stored: await shared.get(key), content };
}

describe('an upload deduplicated onto bytes another instance is collecting (PostgreSQL, shared blobs)', () => {
  it('with the blob locks, the upload waits for the collection and its asset downloads', async () => {
    const r = await raceUploadWithCollection(true);
    expect(r.upload).toBe('waiting');
    expect(r.stored).not.toBeNull();
    expect(r.content.status).toBe(200);
    expect(await bytesOf(r.content)).toEqual(r.bytes);
  });

  it('without them (blobLocks: false), the asset is left over deleted bytes: the race the locks close', async () => {
    const r = await raceUploadWithCollection(false);
    expect(r.upload).toBe('done');
    expect(r.stored).toBeNull();
    expect(r.content.status).not.toBe(200);
  });
});
