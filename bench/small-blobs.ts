// Small-blob benchmark (npm run bench:small-blobs): what the fs blob store
// spends to make one small object durable (a job's 150-byte image, as on the
// worker path of bench:worker), next to a bare writer doing the least a durable
// file needs (open, write, fsync, close), in the same process and run.
// Four cases, each BENCH_BLOBS writes (default 2,000) after 200 warm-up ones,
// run twice in alternation with the bare writer:
// - store, new prefix directory: the first write into each of a store's 256
//   prefix directories (what a new store's first 256 objects cost; a fresh
//   store every 256 writes, opened outside the measured time);
// - store, existing prefix directory: random keys into a store whose 256
//   prefix directories are all made (every write after those);
// - inline: SQLite storage's default inline blobs in front of such a store:
//   the blob is a row, its commit a WAL commit (synchronous=NORMAL: durable
//   like the database's rows, not synced as it returns);
// - bare writer: one file per blob in one directory.
// Printed: CPU (user + system, every thread) and wall time per blob, and the
// store's CPU as a multiple of the bare writer's. No target: a diagnostic for
// the worker target of bench:worker, where each job stores one such output.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore, type FsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { BlobStore } from '../storage/types.ts';

const BLOBS = Number(process.env.BENCH_BLOBS ?? 2000);
const WARMUP = 200;
const SIZE = 150;

if (!Number.isInteger(BLOBS) || BLOBS < 10) {
  console.error(`BENCH_BLOBS must be a whole number of at least 10, got "${process.env.BENCH_BLOBS}".`);
  process.exit(2);
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

interface Figures {
  cpuUs: number;
  wallUs: number;
}

/** Runs `write` n times one after another: CPU and wall time per write. */
async function measure(n: number, write: () => Promise<void>): Promise<Figures> {
  const cpu0 = cpuMicros();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await write();
  return { cpuUs: (cpuMicros() - cpu0) / n, wallUs: ((performance.now() - t0) * 1000) / n };
}

const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-small-blobs-'));
try {
  const PREFIXES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
  const key = (prefix: string) => prefix + randomBytes(16).toString('hex');
  let stores = 0;
  const openStore = () => createFsBlobStore({ dir: join(dir, `blobs-${++stores}`) });
  const viaStore = async (store: BlobStore, k: string) => {
    const writer = await store.begin();
    await writer.write(randomBytes(SIZE));
    await writer.commit(k);
  };
  const randomPrefix = () => PREFIXES[randomBytes(1)[0]!]!;

  const full = await openStore();
  for (const prefix of PREFIXES) await viaStore(full, key(prefix));
  const existingDir = () => viaStore(full, key(randomPrefix()));

  // Each (store, prefix) pair is written once, so each write makes its directory.
  let fresh: Array<[FsBlobStore, string]> = [];
  let next = 0;
  const prepareFresh = async (n: number) => {
    fresh = [];
    next = 0;
    while (fresh.length < n) {
      const store = await openStore();
      for (const prefix of PREFIXES) fresh.push([store, prefix]);
    }
  };
  const newDir = async () => {
    const [store, prefix] = fresh[next++]!;
    await viaStore(store, key(prefix));
  };

  const bareDir = join(dir, 'bare');
  await mkdir(bareDir);
  const bare = async () => {
    const fh = await open(join(bareDir, key('')), 'wx');
    try {
      await fh.write(randomBytes(SIZE));
      await fh.sync();
    } finally {
      await fh.close();
    }
  };
  // SQLite's default inline blobs in front of a full fs store: the blob is a row, committed as its own write.
  const sqlite = await createSqliteStorage({ filename: join(dir, 'inline.db'), blobs: await openStore() });
  const inline = () => viaStore(sqlite.blobs, key(randomPrefix()));

  const cases = { newDir, existingDir, inline, bare };
  const run = async (name: keyof typeof cases, n: number) => {
    if (name === 'newDir') await prepareFresh(n);
    return measure(n, cases[name]);
  };
  for (const name of Object.keys(cases) as Array<keyof typeof cases>) await run(name, WARMUP);
  const runs: Record<keyof typeof cases, Figures[]> = { newDir: [], existingDir: [], inline: [], bare: [] };
  // Alternating halves: a noisy moment of the machine lands on one half of one case, not on a whole case.
  for (let round = 0; round < 2; round++) {
    for (const name of Object.keys(cases) as Array<keyof typeof cases>) runs[name].push(await run(name, BLOBS / 2));
  }
  const mean = (fs: Figures[]): Figures => ({
    cpuUs: fs.reduce((a, f) => a + f.cpuUs, 0) / fs.length,
    wallUs: fs.reduce((a, f) => a + f.wallUs, 0) / fs.length,
  });
  const base = mean(runs.bare);
  const row = (label: string, f: Figures, ratio: string) =>
    console.log(`  ${label.padEnd(52)}${`${f.cpuUs.toFixed(0)} us`.padEnd(14)}${`${f.wallUs.toFixed(0)} us`.padEnd(14)}${ratio}`);
  console.log(`\nsmall blobs: ${BLOBS} writes of ${SIZE} bytes per case, one at a time, after ${WARMUP} warm-up writes each\n`);
  console.log(`  ${''.padEnd(52)}${'CPU/blob'.padEnd(14)}${'wall/blob'.padEnd(14)}CPU vs bare`);
  row('fs blob store, new prefix directory (1st of 256)', mean(runs.newDir), `${(mean(runs.newDir).cpuUs / base.cpuUs).toFixed(2)} x`);
  row('fs blob store, existing prefix directory', mean(runs.existingDir), `${(mean(runs.existingDir).cpuUs / base.cpuUs).toFixed(2)} x`);
  row('inline in SQLite (createSqliteStorage default)', mean(runs.inline), `${(mean(runs.inline).cpuUs / base.cpuUs).toFixed(2)} x`);
  row('bare open/write/fsync/close (baseline)', base, '1.00 x');
  await sqlite.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
