// The kept views of finished jobs (core/jobs/view-cache.ts) with two
// instances on one PostgreSQL database (test/helpers/postgres.ts starts it)
// and one blob directory: an output deleted on either instance is gone from
// the view the other kept, because the delete bumps the job's view version in
// its own transaction and every GET reads that stamp first.
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import { blake3Of, bytesOf } from './helpers/assets.ts';
import { type Harness, MODES, type Mode, type OpenStorage, startHarness } from './helpers/harness.ts';
import { jobNow, runJob, saveImageWorkflow } from './helpers/jobs.ts';
import { startPeer } from './helpers/peer-service.ts';
import { usePostgres } from './helpers/postgres.ts';

const server = usePostgres();

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

/** A runs the jobs, B serves the API only; both on one new database and A's blob directory. */
async function startPair(mode: Mode): Promise<{ a: Harness; b: Harness }> {
  const url = await server.newDatabase();
  const open: OpenStorage = (blobs) => createPostgresStorage({ connectionString: url, blobs });
  const a = await startHarness(mode, { engine: createLocalEngine({ nodes: builtinNodes }) }, open);
  closers.push(() => a.close());
  const b = await startPeer(a, { runJobs: false }, open);
  closers.push(() => b.close());
  return { a, b };
}

async function readText(h: Harness, id: string): Promise<string> {
  const res = await h.fetch(`/api/v2/jobs/${id}`);
  expect(res.status).toBe(200);
  return res.text();
}

/** `reader` keeps the view, `deleter` deletes its output; the next read on `reader` lists none. */
async function deletedElsewhere(reader: Harness, deleter: Harness, runner: Harness): Promise<void> {
  const done = await runJob(runner, saveImageWorkflow(0x0f0f0f));
  const kept = await readText(reader, done.id);
  expect(await readText(reader, done.id)).toBe(kept);
  const [output] = JSON.parse(kept).outputs;
  const res = await reader.fetch(output.url);
  expect(res.status).toBe(200);
  expect(await blake3Of(await bytesOf(res))).toBe(output.hash);

  expect((await deleter.fetch(`/api/v2/assets/${output.id}`, { method: 'DELETE' })).status).toBe(204);

  const after = JSON.parse(await readText(reader, done.id));
  expect(after.outputs).toEqual([]);
  expect({ ...after, outputs: null }).toEqual({ ...JSON.parse(kept), outputs: null });
  expect((await jobNow(deleter, done.id)).outputs).toEqual([]);
  expect((await reader.fetch(output.url)).status).toBe(404);
}

describe.each(MODES)('kept job views, two instances on one PostgreSQL database (%s)', (mode) => {
  it('an output deleted on the other instance is gone from the view this one kept, both ways', async () => {
    const { a, b } = await startPair(mode);
    await deletedElsewhere(a, b, a);
    await deletedElsewhere(b, a, a);
  });
});
