// The memory AssetStore keeps its own indexes (hash -> blob, blob -> assets,
// job -> assets, path -> assets); a write that forgets one leaves reads answering from stale
// entries. The conformance suite checks chosen cases; this replays seeded
// random operations over a tiny pool of values (so commits collide, blobs are
// shared, assets expire and get swept) against the memory store and SQLite,
// the reference, and requires the same answer after every operation.
import { describe, expect, it } from 'vitest';
import { createMemoryBlobStore, createMemoryStorage } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { AssetStore, BlobRecord } from '../storage/types.ts';
import { T0 } from './suites/store-fixtures.ts';

const SEEDS = [1, 2, 3, 42, 2024, 31337];
const STEPS = 400;
const NOW = T0;
/** Larger than any pool here: ties in expiry or blob age make a limited answer unspecified, so it is never the limit that picks. */
const ALL = 1000;

const ACCOUNTS = ['acc1', 'acc2'];
const JOB_IDS = ['j1', 'j2', 'j3'];
const JOBS = [...JOB_IDS, null];
const KEYS = ['b1', 'b2', 'b3', 'b4', 'b5'];
const HASHES = ['blake3:h1', 'blake3:h2', 'blake3:h3', 'blake3:h4'];
const IDS = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'a10'];
const PATHS = ['in/cat.png', 'in/dog.png'];

/** mulberry32: a tiny seeded PRNG, so a failing seed replays exactly. */
const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

/** One operation: a label for the failure message, and how to run it on a store, answering something comparable. */
interface Op {
  label: string;
  run: (s: AssetStore) => Promise<unknown>;
}

/** Blob rows are stamped with the wall clock at commit: the one field the two stores may differ in. */
const blobView = (b: BlobRecord | null) => (b ? { key: b.key, hash: b.hash, size: b.size } : null);
const sorted = (xs: string[]) => [...xs].sort();

function generator(seed: number) {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  /** Times a few steps either side of NOW: some assets are expired at some reads and live at others. */
  const around = () => NOW + (Math.floor(rand() * 5) - 2) * 10;
  const op = (name: string, args: unknown[], run: Op['run']): Op => ({ label: `${name}(${JSON.stringify(args).slice(1, -1)})`, run });

  const ops: Array<[weight: number, make: () => Op]> = [
    [
      8,
      () => {
        // The hash is chosen independently of the key, so it is sometimes another blob's: a new blob then must be refused.
        const blob = { key: pick(KEYS), hash: rand() < 0.2 ? null : pick(HASHES), size: 1 + Math.floor(rand() * 3) };
        const jobId = pick(JOBS);
        const asset = {
          id: pick(IDS),
          account_id: pick(ACCOUNTS),
          blob_key: blob.key,
          content_type: 'image/png',
          file_path: rand() < 0.4 ? null : pick(PATHS),
          tags: rand() < 0.5 ? [] : ['t'],
          created_at: around(),
          expires_at: rand() < 0.4 ? null : around(),
          job_id: jobId,
          ...(jobId !== null && { node_id: '9', output_type: 'image' }),
        };
        return op('commitAsset', [blob, asset], async (s) => {
          const r = await s.commitAsset(blob, asset);
          return { asset: r.asset, blob_created: r.blob_created };
        });
      },
    ],
    [
      2,
      () => {
        const [key, hash] = [pick(KEYS), pick(HASHES)];
        return op('setBlobHash', [key, hash], (s) => s.setBlobHash(key, hash));
      },
    ],
    [
      2,
      () => {
        const hash = pick(HASHES);
        return op('findBlobByHash', [hash], async (s) => blobView(await s.findBlobByHash(hash)));
      },
    ],
    [
      2,
      () => {
        const [acc, id, now] = [pick(ACCOUNTS), pick(IDS), around()];
        return op('getAsset', [acc, id, now], (s) => s.getAsset(acc, id, now));
      },
    ],
    [
      2,
      () => {
        const [acc, path, now] = [pick(ACCOUNTS), pick(PATHS), around()];
        return op('findAssetByPath', [acc, path, now], (s) => s.findAssetByPath(acc, path, now));
      },
    ],
    [
      2,
      () => {
        const [acc, hash, now] = [pick(ACCOUNTS), pick(HASHES), around()];
        return op('listAssetsByHash', [acc, hash, now], (s) => s.listAssetsByHash(acc, hash, now)); // newest first, as documented: order compared
      },
    ],
    [
      2,
      () => {
        const [acc, job] = [pick(ACCOUNTS), pick(JOB_IDS)];
        return op('listJobAssets', [acc, job], (s) => s.listJobAssets(acc, job)); // commit order, as documented: order compared
      },
    ],
    [
      4,
      () => {
        const [acc, id, now] = [pick(ACCOUNTS), pick(IDS), around()];
        return op('deleteAsset', [acc, id, now], (s) => s.deleteAsset(acc, id, now));
      },
    ],
    [
      1,
      () => {
        const key = pick(KEYS);
        return op('blockBlob', [key], async (s) => sorted(await s.blockBlob(key, 'scan', NOW)));
      },
    ],
    [
      1,
      () => {
        const key = pick(KEYS);
        return op('isBlobBlocked', [key], (s) => s.isBlobBlocked(key));
      },
    ],
    [
      2,
      () => {
        const now = around();
        return op('deleteExpiredAssets', [now], async (s) => sorted(await s.deleteExpiredAssets(now, ALL)));
      },
    ],
    [2, () => op('listUnreferencedBlobs', [], async (s) => sorted(await s.listUnreferencedBlobs(ALL)))],
    [
      2,
      () => {
        const key = pick(KEYS);
        return op('deleteBlobIfUnreferenced', [key], (s) => s.deleteBlobIfUnreferenced(key));
      },
    ],
    [
      1,
      () => {
        const keys = KEYS.filter(() => rand() < 0.6);
        return op('knownBlobKeys', [keys], async (s) => sorted(await s.knownBlobKeys(keys)));
      },
    ],
  ];
  const total = ops.reduce((sum, [w]) => sum + w, 0);
  return (): Op => {
    let r = rand() * total;
    for (const [w, make] of ops) if ((r -= w) < 0) return make();
    return ops[ops.length - 1][1]();
  };
}

/** What a call answered, or that it threw (messages differ between stores and are not compared). */
const outcome = async (f: () => Promise<unknown>) => {
  try {
    return { value: await f() };
  } catch {
    return { threw: true };
  }
};

describe('memory AssetStore indexes agree with SQLite on random operation sequences', () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    const memory = createMemoryStorage().metadata;
    const sqlite = await createSqliteStorage({ filename: ':memory:', blobs: createMemoryBlobStore() });
    const next = generator(seed);
    const log: string[] = [];
    let threw = 0;
    try {
      for (let step = 0; step < STEPS; step++) {
        const op = next();
        log.push(op.label);
        const expected = await outcome(() => op.run(sqlite.metadata));
        const actual = await outcome(() => op.run(memory));
        // The message names the seed and step (the whole sequence replays from the seed) and the last operations before it.
        expect(actual, `seed ${seed}, step ${step}:\n${log.slice(-15).join('\n')}`).toEqual(expected);
        if ('threw' in expected) threw++;
      }
    } finally {
      await memory.close();
      await sqlite.close();
    }
    // The sequence reached the refusals it is meant to (a taken hash, a duplicate id), not only happy paths.
    expect(threw).toBeGreaterThan(0);
  });
});
