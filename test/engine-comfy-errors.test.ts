// A worker's execution_error as the job's error: each kind of failure the
// real server reports maps to the spec's exception type (the worker's own
// type when none fits), with the worker's message, its traceback (without the
// worker's directories), and the failing node; a workflow the worker refuses
// at /prompt is a ValidationError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineNode } from '../engine/local/define-node.ts';
import { ERROR_CATALOG, type InjectedErrorKind } from './fakes/comfyui-worker.ts';
import { expectJobShape, submitOk, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow } from './helpers/local-nodes.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';
import { connectWs, type WsClient } from './helpers/ws-client.ts';

/** As the real LoadImage: a combo of the files the worker has, flagged for upload (any name passes our validation). */
const loadImageCombo = defineNode({
  name: 'LoadImageCombo',
  category: 'test',
  required: { image: [['a.png', 'b.png'], { image_upload: true }] },
  outputs: [{ type: 'IMAGE' }],
  run: () => {
    throw new Error('never runs: the worker refuses the prompt');
  },
});

let s: WorkerService;
let c: WsClient;
beforeAll(async () => {
  s = await startWorkerService({ workers: [{ nodes: [loadImageCombo] }] });
  c = await connectWs(s.base, { clientId: 'errors' });
});
afterAll(async () => {
  await c.close();
  await s.close();
});

const MAPPED: Array<[InjectedErrorKind, string]> = [
  ['oom', 'OOMError'],
  ['model_missing', 'ModelDownloadError'],
  ['image_download', 'ImageDownloadError'],
  ['insufficient_funds', 'InsufficientFundsError'],
  ['inactive_subscription', 'InactiveSubscriptionError'],
  ['runtime', 'RuntimeError'],
  ['value', 'ValueError'],
];

describe('execution errors of the worker', () => {
  it.each(MAPPED)("%s -> %s, with the worker's message, traceback and node", async (kind, type) => {
    s.workers[0].failures.error = { kind, class_type: 'Add' };
    const job = await submitOk(s, sumWorkflow(kind.slice(0, 3)));
    const failed = expectJobShape(await waitForJob(s, job.id, 'failed', 5000));
    const reported = ERROR_CATALOG[kind];
    // The worker's frames, its install directory (/ComfyUI/...) left out: `File "execution.py", line 496, in execute`.
    const frames = reported.traceback
      .join('')
      .trimEnd()
      .replaceAll(/File "\/(?:[^"/]+\/)+/g, 'File "');
    expect(frames).toContain('File "execution.py", line 496, in execute');
    expect(failed.error).toEqual({
      code: 'node_execution_error',
      message: reported.exception_message.trim(),
      exception_type: type,
      node_id: `${kind.slice(0, 3)}3`,
      class_type: 'Add',
      traceback: frames,
    });
    expect(failed.outputs).toEqual([]);

    // /ws says the same in the reference's execution_error.
    const msg = await c.waitFor(`error of ${job.id}`, (f) => f.kind === 'text' && f.type === 'execution_error' && f.data.prompt_id === job.id);
    expect((msg as any).data).toMatchObject({
      node_id: `${kind.slice(0, 3)}3`,
      node_type: 'Add',
      exception_type: type,
      exception_message: reported.exception_message.trim(),
    });
    expect((msg as any).data.traceback.join('')).toBe(`${frames}\n`);
  });

  it("a failing node of the worker's own keeps its exception type", async () => {
    const job = await submitOk(s, {
      1: { class_type: 'Number', inputs: { value: 3 } },
      2: { class_type: 'Fail', inputs: { value: ['1', 0] } },
      3: { class_type: 'Show', inputs: { value: ['2', 0] } },
    });
    const failed = await waitForJob(s, job.id, 'failed', 5000);
    expect(failed.error).toMatchObject({
      code: 'node_execution_error',
      exception_type: 'TypeError',
      message: 'cannot do that',
      node_id: '2',
      class_type: 'Fail',
    });
  });
});

describe('a workflow the worker refuses at submission', () => {
  it("is a ValidationError whose message carries the worker's node errors", async () => {
    const job = await submitOk(s, {
      l: { class_type: 'LoadImageCombo', inputs: { image: 'not-on-the-worker.png' } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'x' } },
    });
    const failed = expectJobShape(await waitForJob(s, job.id, 'failed', 5000));
    expect(failed.error).toMatchObject({ code: 'invalid_workflow', exception_type: 'ValidationError', node_id: 'l', class_type: 'LoadImageCombo' });
    expect(failed.error.message).toMatch(/Prompt outputs failed validation/i);
    expect(failed.error.message).toMatch(/node l \(LoadImageCombo\): Value not in list/);
    expect(failed.error.message).toContain('not-on-the-worker.png');
    // Refused, never queued on the worker.
    expect(s.workers[0].queue.history.has(job.id)).toBe(false);
    expect(s.workers[0].submissions.at(-1)!.prompt_id).toBe(job.id);
  });
});
