// A node's files become the job's outputs as soon as the worker reports them
// (its `executed` message), while the job still runs: the v2 job lists them,
// and our /ws `executed` names them by content, so the name fetches exactly
// that file even when two jobs' workers wrote files of the same name.
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { blake3Of, expectSameBytes } from './helpers/assets.ts';
import { follow, view } from './helpers/cloud-files.ts';
import { getJob, submitOk, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';
import { connectWs } from './helpers/ws-client.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** An image saved first, then a wait of `steps` x 50 ms (and its Show): the job runs on after the save. */
const saveThenWait = (color: number, prefix: string, steps = 20): Workflow => ({
  e: { class_type: 'EmptyImage', inputs: { width: 5, height: 3, batch_size: 1, color } },
  s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: prefix } },
  ...waitWorkflow(color % 100, 50, steps),
});

/** The bytes /api/view serves for a name (through its redirect). */
const viewBytes = async (h: WorkerService, name: string) =>
  new Uint8Array(await (await follow(h, await view(h, `filename=${encodeURIComponent(name)}&type=output`))).arrayBuffer());

describe('outputs while the job runs', () => {
  it('a saved file is an output of the running job, and /ws executed names it by content', async () => {
    s = await startWorkerService();
    const [w] = s.workers;
    const ws = await connectWs(s.base, { clientId: 'live' });
    const job = await submitOk(s, saveThenWait(0x11aa33, 'live'));

    const executed = await ws.waitFor(
      'executed of s',
      (f) => f.kind === 'text' && f.type === 'executed' && f.data.prompt_id === job.id && f.data.node === 's',
    );
    const now = (await getJob(s, job.id)).body;
    expect(now.status).toBe('running');
    expect(now.outputs.map((o: any) => [o.node_id, o.name, o.type])).toEqual([['s', 'live_00001_.png', 'image']]);

    const written = s.workerFile(w, 'output', 'live_00001_.png');
    const [ref] = (executed as any).data.output.images;
    expect(ref).toEqual({ filename: `${(await blake3Of(written)).slice('blake3:'.length)}.png`, subfolder: '', type: 'output' });
    expect(now.outputs[0].hash).toBe(await blake3Of(written));
    expectSameBytes(await viewBytes(s, ref.filename), written);

    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    // Committed once: by its message; the history at the end found nothing missing.
    expect(done.outputs.map((o: any) => o.node_id).sort()).toEqual(['s', 'w3']);
    expect(w.requests.filter((r) => r.path === '/view').length).toBe(1);
    await ws.close();
  });

  it("two jobs whose workers wrote the same file name: each /ws name fetches that job's own bytes", async () => {
    s = await startWorkerService({ workers: 2 });
    const ws = await connectWs(s.base, { clientId: 'same-name' });
    const jobs = [await submitOk(s, saveThenWait(0xff0000, 'same', 4)), await submitOk(s, saveThenWait(0x0000ff, 'same', 4))];
    for (const j of jobs) await waitForJob(s, j.id, 'succeeded', 10_000);

    const owners = jobs.map((j) => s!.workers.find((w) => w.submissions.some((x) => x.prompt_id === j.id))!);
    expect(new Set(owners).size).toBe(2);
    const names: string[] = [];
    for (const [i, j] of jobs.entries()) {
      // Both workers wrote same_00001_.png; the names the account sees differ.
      expect(owners[i].queue.history.get(j.id)!.outputs.s.images).toEqual([{ filename: 'same_00001_.png', subfolder: '', type: 'output' }]);
      const executed = ws.jobMessages(j.id).find((m) => m.type === 'executed' && m.data.node === 's')!;
      const [ref] = executed.data.output.images;
      names.push(ref.filename);
      expectSameBytes(await viewBytes(s, ref.filename), s.workerFile(owners[i], 'output', 'same_00001_.png'));
    }
    expect(names[0]).not.toBe(names[1]);
    await ws.close();
  });
});
