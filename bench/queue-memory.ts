// Memory of the reads that return workflows: N queued jobs of ~8 MB workflows
// (10,000 nodes each) in a SQLite file, then, in a child process whose heap
// is capped, GET /api/queue read to the end, the sweep and GET /api/jobs.
// Prints the status, body size, time and peak RSS of each.
//   npx tsx bench/queue-memory.ts [jobs, default 70] [heap MB, default 128]
// Baseline, before the reads left workflows out (70 jobs, 2 cores): under a
// 128 MB heap the process died of heap exhaustion in /api/queue; under 4 GB,
// /api/queue answered 500 (its one JSON string passed V8's limit) at 1.9 GB
// peak RSS, the sweep took 2.6 s and the job list peaked at 1.35 GB. Since,
// under 128 MB: /api/queue 200 with all 551 MB streamed at ~290 MB peak RSS,
// the sweep and the job list ~155 MB.
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createService, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

const MB = 2 ** 20;
const ACCOUNT = { id: 'alice', tier: 'free', apiKeys: ['key-alice'] };

async function populate(file: string, count: number): Promise<number> {
  const storage = await createSqliteStorage({ filename: file, blobs: createMemoryBlobStore() });
  const workflow: Record<string, unknown> = {};
  for (let i = 0; i < 10_000; i++) workflow[String(i)] = { class_type: 'CLIPTextEncode', inputs: { text: 'word '.repeat(150), clip: ['4', 1] } };
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    await storage.metadata.createJob({
      id: crypto.randomUUID(),
      account_id: ACCOUNT.id,
      status: 'queued',
      workflow,
      created_at: now,
      expires_at: now + 86_400_000,
    });
  }
  await storage.close();
  return JSON.stringify(workflow).length;
}

/** In the child: each read over the file, with its peak RSS. */
async function read(file: string): Promise<void> {
  const storage = await createSqliteStorage({ filename: file, blobs: createMemoryBlobStore() });
  const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, runJobs: false, accounts: [ACCOUNT] });
  const measure = async (name: string, work: () => Promise<string>) => {
    // From a collected heap, so a read is not charged with what the one before left.
    (globalThis as { gc?: () => void }).gc?.();
    let peak = process.memoryUsage().rss;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const t0 = performance.now();
    const result = await work();
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    console.log(`${name.padEnd(12)} ${result}, ${Math.round(performance.now() - t0)} ms, peak RSS ${Math.round(peak / MB)} MB`);
  };
  const get = (path: string) => service.fetch(new Request(`http://bench${path}`, { headers: { 'x-api-key': 'key-alice' } }));
  await measure('/api/queue', async () => {
    const res = await get('/api/queue');
    let bytes = 0;
    for await (const chunk of res.body!) bytes += chunk.length;
    return `${res.status}, ${Math.round(bytes / MB)} MB body`;
  });
  await measure('sweep', async () => JSON.stringify(await service.sweep()));
  await measure('/api/jobs', async () => {
    const res = await get('/api/jobs?limit=1000');
    return `${res.status}, ${((await res.json()) as { jobs: unknown[] }).jobs.length} jobs`;
  });
  await service.close();
}

if (process.argv[2] === '--read') {
  await read(process.argv[3]!);
} else {
  const count = Number(process.argv[2] ?? 70);
  const heap = Number(process.argv[3] ?? 128);
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-queue-'));
  try {
    const file = join(dir, 'queue.sqlite');
    const size = await populate(file, count);
    console.log(`${count} queued jobs of ${(size / MB).toFixed(1)} MB workflows; reads under a ${heap} MB heap:`);
    const child = fork(fileURLToPath(import.meta.url), ['--read', file], {
      execArgv: [`--max-old-space-size=${heap}`, '--expose-gc', '--import', import.meta.resolve('tsx')],
      stdio: 'inherit',
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) console.log(`the reading process ended with ${code}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
