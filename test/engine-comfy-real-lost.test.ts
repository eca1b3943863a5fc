// The real engine server (ComfyUI, CPU, started by the test through
// ../shared/comfyui/run-comfyui.sh) killed mid-job, as a crash would (SIGKILL
// of its process group while a blur computes), and started again on the same
// port and files: what graphrun documents for a lost worker, through the v2
// API. By default the job runs again, here on the restarted server, and
// succeeds with each output once, one committed before the kill included;
// with onWorkerLost 'fail' it fails with WorkerLostError and is not run
// again. Either way a new job runs on the restarted server.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { jobNow, submitOk } from './helpers/jobs.ts';
import { type RealComfyUI, startRealComfyUI } from './helpers/real-comfyui.ts';
import { blurChain, download, ended, historyOf, nodeRuns, pixelsOff, type RealService, serviceOn, TEST_MS } from './helpers/real-jobs.ts';
import { invertChain, rgbOf, uniqueColor } from './suites/engine-fixtures.ts';

let server: RealComfyUI;
beforeAll(async () => {
  server = await startRealComfyUI();
}, 20 * 60_000);
afterAll(() => server?.stop());

let h: RealService | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  // A test that failed between kill and restart leaves the server down for the next (restart refuses a running one).
  await server?.restart().catch(() => {});
});

/** Submits the workflow and kills the server while it computes node b1. */
async function killedWhileBlurring(service: RealService, workflow: Workflow): Promise<string> {
  const { id } = await submitOk(service, workflow);
  await nodeRuns(service, id, 'b1');
  await server.kill();
  return id;
}

const filesOf = async (prefix: string) => (await readdir(join(server.base, 'output'))).filter((f) => f.startsWith(`${prefix}_`)).sort();
const written = async (name: string) => new Uint8Array(await readFile(join(server.base, 'output', name)));

/** A new job runs on the (restarted) server and succeeds with its image. */
async function nextJobRuns(service: RealService): Promise<void> {
  const color = uniqueColor();
  const next = await ended(service, (await submitOk(service, invertChain(color))).id);
  expect(next.status, JSON.stringify(next.error)).toBe('succeeded');
  expect((await historyOf(server, next.id))?.status.status_str).toBe('success');
  const inverted = rgbOf(color).map((v) => 255 - v);
  expect(pixelsOff((await download(service, next.outputs[0])).bytes, inverted)).toBe(0);
}

describe('the real engine server killed mid-job and restarted on the same port', () => {
  it(
    'requeue (the default): the job runs again on the restarted server and succeeds with each output once, the one committed before the kill included',
    async () => {
      h = await serviceOn([server]);
      const tag = `lost-${crypto.randomUUID()}`;
      const color = uniqueColor();
      // The server saves `early` first (an output node ready at once), then blurs.
      const id = await killedWhileBlurring(h, {
        ...blurChain(color, 2, `${tag}-final`),
        early: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: `${tag}-early` } },
      });
      const before = await jobNow(h, id);
      expect(before.outputs.map((o: any) => o.node_id)).toEqual(['early']);
      await server.restart();

      const done = await ended(h, id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.outputs.map((o: any) => [o.node_id, o.type]).sort()).toEqual([
        ['early', 'image'],
        ['s', 'image'],
      ]);
      expect(h.log.some((l) => l.message === 'job moved to another worker' && l.detail?.job_id === id)).toBe(true);
      // The restarted server ran it from the start; the killed run got no further than `early`.
      expect((await historyOf(server, id))?.status.status_str).toBe('success');
      const final = await filesOf(`${tag}-final`);
      expect(final).toHaveLength(1);
      const s = done.outputs.find((o: any) => o.node_id === 's');
      const { bytes } = await download(h, s);
      expect(Buffer.from(bytes).equals(await written(final[0]))).toBe(true);
      expect(pixelsOff(bytes, rgbOf(color))).toBe(0);

      // `early` was saved by both runs, under two names with the same bytes: it is the output committed first, unchanged.
      const early = await filesOf(`${tag}-early`);
      expect(early).toHaveLength(2);
      const same = ({ id, name, hash, size_bytes }: any) => ({ id, name, hash, size_bytes });
      expect(same(done.outputs.find((o: any) => o.node_id === 'early'))).toEqual(same(before.outputs[0]));
      const earlyBytes = (await download(h, before.outputs[0])).bytes;
      for (const name of early) expect(Buffer.from(earlyBytes).equals(await written(name)), name).toBe(true);

      await nextJobRuns(h);
    },
    TEST_MS,
  );

  it(
    "onWorkerLost 'fail': the job fails with WorkerLostError naming the server and is not run again",
    async () => {
      h = await serviceOn([server], { onWorkerLost: 'fail' });
      const id = await killedWhileBlurring(h, blurChain(uniqueColor(), 2, `lost-${crypto.randomUUID()}`));
      // Still down: the job is lost once the server has not answered for workerLostAfterMs.
      const failed = await ended(h, id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ code: 'execution_error', exception_type: 'WorkerLostError', node_id: null });
      expect(failed.error.message).toContain(`The worker ${server.url} was lost`);
      expect(failed.outputs).toEqual([]);

      await server.restart();
      await nextJobRuns(h);
      expect(await historyOf(server, id)).toBeNull();
      expect((await jobNow(h, id)).status).toBe('failed');
    },
    TEST_MS,
  );
});
