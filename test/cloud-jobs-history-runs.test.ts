// What a history entry says of its run, as the reference writes it: a
// PreviewImage's temp images among the outputs (served by /api/view while
// they are kept, then left out), and status.messages in the reference's
// order, start, execution_cached with the nodes served from cache (`[]` on a
// first run), then success, error or interrupted. /api/jobs/{id} shows the same.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { blake3Of, bytesOf, testClock } from './helpers/assets.ts';
import { follow, view } from './helpers/cloud-files.ts';
import { asCloud, type CloudJobsHarness, getJson, promptOk, startCloudAccounts } from './helpers/cloud-jobs.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, cancelJob, jobNow, PNG_SIGNATURE, until, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';

const DAY = 86_400_000;

const previewWorkflow = {
  e: { class_type: 'EmptyImage', inputs: { width: 3, height: 2, batch_size: 1, color: 0x4080c0 } },
  p: { class_type: 'PreviewImage', inputs: { images: ['e', 0] } },
};

const failWorkflow = {
  f1: { class_type: 'Number', inputs: { value: 5 } },
  f2: { class_type: 'Fail', inputs: { value: ['f1', 0] } },
  f3: { class_type: 'Show', inputs: { value: ['f2', 0] } },
};

const kinds = (messages: any[][]) => messages.map(([type]) => type);

describe.each(MODES)("history entries tell the run's temp files and cached nodes (%s)", (mode) => {
  let h: CloudJobsHarness;
  let alice: CloudJobsHarness;
  let bob: CloudJobsHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => {
    ({ h, alice, bob } = await startCloudAccounts(mode, options));
  };
  afterEach(async () => h?.close());
  /** Submits as the account of `key` and waits for the job to end in `status`. */
  const finish = async (key: string, workflow: Record<string, unknown>, status = 'succeeded') => {
    const { prompt_id } = await promptOk(asCloud(h, key), workflow);
    await waitForJob(asKey(h, key), prompt_id, status);
    return prompt_id as string;
  };
  const entryOf = async (as: CloudJobsHarness, id: string) => (await getJson(as, `/api/history/${id}`)).body[id];

  it("a PreviewImage's image is listed as a temp file /api/view serves; the first run caches nothing, the same job again does", async () => {
    await start();
    const first = await finish('key-alice', previewWorkflow);
    const entry = await entryOf(alice, first);
    expect(entry.outputs).toEqual({ p: { images: [{ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'temp' }] } });
    expect(entry.meta).toEqual({ p: { node_id: 'p', display_node: 'p', parent_node: null, real_node_id: 'p' } });
    const [image] = entry.outputs.p.images;
    const bytes = await bytesOf(await follow(h, await view(alice, `filename=${image.filename}&subfolder=&type=temp`)));
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(await blake3Of(bytes)).toBe(`blake3:${image.filename.slice(0, 64)}`);
    // A temp file is no output of the job.
    expect((await jobNow(asKey(h, 'key-alice'), first)).outputs).toEqual([]);

    const [started, cached, success] = entry.status.messages;
    expect(kinds(entry.status.messages)).toEqual(['execution_start', 'execution_cached', 'execution_success']);
    expect(cached[1]).toEqual({ nodes: [], prompt_id: first, timestamp: started[1].timestamp });
    expect(success[1].timestamp).toBeGreaterThanOrEqual(started[1].timestamp);

    // The same graph again: the engine serves the image from cache and runs the preview (an output node) again.
    const again = await finish('key-alice', previewWorkflow);
    const second = await entryOf(alice, again);
    expect(kinds(second.status.messages)).toEqual(['execution_start', 'execution_cached', 'execution_success']);
    expect(second.status.messages[1][1]).toMatchObject({ nodes: ['e'], prompt_id: again });
    expect(second.outputs.p.images).toEqual([image]);
    // Another account's cache is its own: nothing of alice's serves bob.
    const bobs = await finish('key-bob', previewWorkflow);
    expect((await entryOf(bob, bobs)).status.messages[1][1].nodes).toEqual([]);
    // The whole history and the job's detail say the same.
    expect((await getJson(alice, '/api/history')).body[again]).toEqual(second);
    const detail = (await getJson(alice, `/api/jobs/${again}`)).body;
    expect(detail.outputs).toEqual(second.outputs);
    expect(detail.execution_status).toEqual(second.status);
    expect(detail.execution_meta).toEqual(second.meta);
  });

  it('temp images are listed while they are kept (a day, not the whole job), then left out with the file gone', async () => {
    const clock = testClock(Date.now());
    await start({ now: clock.now, jobRetentionSeconds: 3 * 86_400 });
    const id = await finish('key-alice', previewWorkflow);
    const [image] = (await entryOf(alice, id)).outputs.p.images;
    clock.advance(DAY - 1);
    expect((await entryOf(alice, id)).outputs.p.images).toEqual([image]);
    expect((await view(alice, `filename=${image.filename}&type=temp`)).res.status).toBe(302);
    clock.advance(1);
    const later = await entryOf(alice, id);
    expect(later.outputs).toEqual({});
    expect(later.meta).toEqual({});
    expect(kinds(later.status.messages)).toEqual(['execution_start', 'execution_cached', 'execution_success']);
    expect((await view(alice, `filename=${image.filename}&type=temp`)).res.status).toBe(404);
  });

  it('a failed job: start, cached (the nodes served from cache on a second run), then execution_error', async () => {
    await start();
    for (const nodes of [[], ['f1']]) {
      const id = await finish('key-alice', failWorkflow, 'failed');
      const { status } = await entryOf(alice, id);
      expect(status).toMatchObject({ status_str: 'error', completed: false });
      expect(kinds(status.messages)).toEqual(['execution_start', 'execution_cached', 'execution_error']);
      expect(status.messages[1][1]).toMatchObject({ nodes, prompt_id: id });
      expect(status.messages[2][1]).toMatchObject({ prompt_id: id, node_id: 'f2', node_type: 'Fail' });
    }
  });

  it('an interrupted job: start, cached, then execution_interrupted; one canceled before it ran has no messages', async () => {
    await start();
    const v2 = asKey(h, 'key-alice');
    for (const nodes of [[], ['w1']]) {
      const { prompt_id } = await promptOk(alice, waitWorkflow(7, 60_000));
      // Canceled while its Wait node runs: the engine has said what it served from cache by then.
      await until('the Wait node running', async () => (await jobNow(v2, prompt_id)).progress?.current_node === 'w2', 10_000);
      await cancelJob(v2, prompt_id);
      await waitForJob(v2, prompt_id, 'canceled');
      const { status } = await entryOf(alice, prompt_id);
      expect(kinds(status.messages)).toEqual(['execution_start', 'execution_cached', 'execution_interrupted']);
      expect(status.messages[1][1]).toMatchObject({ nodes, prompt_id });
    }
    const running = await promptOk(alice, waitWorkflow(8, 60_000));
    await waitForJob(v2, running.prompt_id, 'running');
    const pending = await promptOk(alice, waitWorkflow(9, 60_000));
    await cancelJob(v2, pending.prompt_id);
    await waitForJob(v2, pending.prompt_id, 'canceled');
    expect((await entryOf(alice, pending.prompt_id)).status.messages).toEqual([]);
    await cancelJob(v2, running.prompt_id);
  });
});
