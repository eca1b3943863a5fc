// History entries of jobs run on engine workers: the preview the worker kept
// in its temp folder is listed as a temp file /api/view serves with the
// worker's bytes, and execution_cached names what the worker served from its
// cache, as the worker's own history entry does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesOf, expectSameBytes } from './helpers/assets.ts';
import { follow, view } from './helpers/cloud-files.ts';
import { getJson } from './helpers/cloud-jobs.ts';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService;
beforeAll(async () => {
  s = await startWorkerService();
});
afterAll(async () => {
  await s.close();
});

const previewWorkflow = {
  e: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color: 0x11aa55 } },
  p: { class_type: 'PreviewImage', inputs: { images: ['e', 0] } },
};

describe('history of a worker job', () => {
  it("lists the worker's temp image and the nodes it served from cache, in the reference's order", async () => {
    for (const run of [1, 2]) {
      const { id } = await submitOk(s, previewWorkflow);
      await waitForJob(s, id, 'succeeded', 15_000);
      const worker = s.workers[0].queue.history.get(id)!;
      const entry = (await getJson(s, `/api/history/${id}`)).body[id];

      const types = (messages: any[][]) => messages.map(([type]) => type);
      expect(types(entry.status.messages)).toEqual(['execution_start', 'execution_cached', 'execution_success']);
      expect(types(worker.status.messages)).toEqual(types(entry.status.messages));
      expect(entry.status.messages[1][1]).toMatchObject({ nodes: worker.status.messages[1][1].nodes, prompt_id: id });
      // The second run's image is served from cache (the real server serves its output nodes so too).
      expect(entry.status.messages[1][1].nodes).toEqual(run === 1 ? [] : expect.arrayContaining(['e']));

      const [theirs] = worker.outputs.p.images as Array<{ filename: string; type: string }>;
      expect(theirs.type).toBe('temp');
      expect(entry.outputs).toEqual({ p: { images: [{ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'temp' }] } });
      const bytes = await bytesOf(await follow(s, await view(s, `filename=${entry.outputs.p.images[0].filename}&type=temp`)));
      expectSameBytes(bytes, s.workerFile(s.workers[0], 'temp', theirs.filename));
    }
  });
});
