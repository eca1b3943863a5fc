// A worker's output files as the job's outputs: every file the worker's
// history lists is committed (images, video, audio, text files, other files
// as outputs with the right type and content type; temp files as temporary
// files of the account), text a node only showed becomes a text output, and
// each downloads with exactly the bytes the worker wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { blake3Of, expectSameBytes } from './helpers/assets.ts';
import { view } from './helpers/cloud-files.ts';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService;
beforeAll(async () => {
  s = await startWorkerService();
});
afterAll(async () => {
  await s.close();
});

const WORKFLOW: Workflow = {
  img: { class_type: 'EmptyImage', inputs: { width: 6, height: 4, batch_size: 2, color: 0x20c060 } },
  si: { class_type: 'SaveImage', inputs: { images: ['img', 0], filename_prefix: 'pic' } },
  pv: { class_type: 'PreviewImage', inputs: { images: ['img', 0] } },
  au: { class_type: 'FakeSaveFile', inputs: { kind: 'audio', size: 3000, filename_prefix: 'snd' } },
  vi: { class_type: 'FakeSaveFile', inputs: { kind: 'video', size: 2 * 1024 * 1024 + 17, filename_prefix: 'clip' } },
  fi: { class_type: 'FakeSaveFile', inputs: { kind: 'file', size: 777, filename_prefix: 'blob' } },
  tx: { class_type: 'SaveTextFile', inputs: { text: 'hello\nworld', filename_prefix: 'notes' } },
  n: { class_type: 'Number', inputs: { value: 9 } },
  sh: { class_type: 'Show', inputs: { value: ['n', 0] } },
};

const download = async (url: string) => new Uint8Array(await (await s.fetch(url)).arrayBuffer());

describe('outputs of a worker job', () => {
  let job: any;
  let entry: any;
  beforeAll(async () => {
    const submitted = await submitOk(s, WORKFLOW);
    job = await waitForJob(s, submitted.id, 'succeeded', 15_000);
    entry = s.workers[0].queue.history.get(job.id);
  });

  it('each file of the worker is an output with its type and content type; temp files are not outputs', () => {
    const rows = job.outputs
      .map((o: any) => [o.node_id, o.name, o.type, o.content_type])
      .sort((a: string[], b: string[]) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
    expect(rows).toEqual([
      ['au', 'snd_00001_.flac', 'audio', 'audio/flac'],
      ['fi', 'blob_00001_.bin', 'file', 'application/octet-stream'],
      ['sh', 'text_sh_0.txt', 'text', 'text/plain; charset=utf-8'],
      ['si', 'pic_00001_.png', 'image', 'image/png'],
      ['si', 'pic_00002_.png', 'image', 'image/png'],
      ['tx', 'notes_00001_.txt', 'text', 'text/plain; charset=utf-8'],
      ['vi', 'clip_00001_.mp4', 'video', 'video/mp4'],
    ]);
    // Nothing of the worker's was dropped: every output file reference is one of the job's outputs.
    const refs = Object.values<any>(entry.outputs)
      .flatMap((ui) => Object.values<any>(ui).flat())
      .filter((r) => r?.filename && r.type === 'output');
    expect(refs.map((r) => r.filename).sort()).toEqual(
      job.outputs
        .filter((o: any) => o.node_id !== 'sh')
        .map((o: any) => o.name)
        .sort(),
    );
  });

  it('every output downloads with the bytes the worker wrote, its hash and size matching', async () => {
    const w = s.workers[0];
    for (const o of job.outputs) {
      const bytes = await download(o.url);
      if (o.node_id === 'sh') {
        expect(new TextDecoder().decode(bytes)).toBe('9');
      } else {
        expectSameBytes(bytes, s.workerFile(w, 'output', o.name));
      }
      expect(o.size_bytes).toBe(bytes.byteLength);
      expect(o.hash).toBe(await blake3Of(bytes));
    }
    expect(job.outputs.find((o: any) => o.node_id === 'vi').size_bytes).toBe(2 * 1024 * 1024 + 17);
  });

  it("the preview's temp file is kept as a temporary file of the account, fetchable through /api/view", async () => {
    const [temp] = entry.outputs.pv.images;
    expect(temp.type).toBe('temp');
    const r = await view(s, `filename=${encodeURIComponent(temp.filename)}&type=temp`);
    expect(r.res.status).toBe(302);
    const bytes = await download(r.res.headers.get('location')!);
    expectSameBytes(bytes, s.workerFile(s.workers[0], 'temp', temp.filename));
    expect(job.outputs.some((o: any) => o.name === temp.filename)).toBe(false);
  });
});

describe('an output the worker serves only on another try', () => {
  const one = (color: number, prefix: string) => ({
    e: { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color } },
    s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: prefix } },
  });
  const views = (w: (typeof s.workers)[number]) => w.requests.filter((r) => r.path === '/view').length;

  it('/view answering 500 twice: tried again with a pause, the job succeeds with the bytes', async () => {
    const w = s.workers[0];
    const before = views(w);
    w.failures.routes.push({ route: 'GET /view', status: 500, times: 2 });
    const job = await submitOk(s, one(0x654321, 'retry'));
    const done = await waitForJob(s, job.id, 'succeeded', 5000);
    expect(views(w) - before).toBe(3);
    expect(done.outputs).toHaveLength(1);
    expectSameBytes(await download(done.outputs[0].url), s.workerFile(w, 'output', done.outputs[0].name));
  });

  it('/view cutting the connection once: tried again, the job succeeds with the bytes', async () => {
    const w = s.workers[0];
    const before = views(w);
    w.failures.routes.push({ route: 'GET /view', cut: true, times: 1 });
    const job = await submitOk(s, one(0x765432, 'cut'));
    const done = await waitForJob(s, job.id, 'succeeded', 5000);
    expect(views(w) - before).toBe(2);
    expectSameBytes(await download(done.outputs[0].url), s.workerFile(w, 'output', done.outputs[0].name));
  });
});

describe('an output the worker cannot serve', () => {
  it('fails the job with WorkerError naming the file, rather than dropping it', async () => {
    const w = s.workers[0];
    w.failures.routes.push({ route: 'GET /view', status: 404 });
    try {
      const job = await submitOk(s, {
        e: { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color: 0x123456 } },
        s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'gone' } },
      });
      const failed = await waitForJob(s, job.id, 'failed', 5000);
      expect(failed.error).toMatchObject({ code: 'execution_error', exception_type: 'WorkerError' });
      expect(failed.error.message).toMatch(/Fetching an output from the worker failed: view gone_00001_\.png: the worker answered 404/);
    } finally {
      w.failures.routes.length = 0;
    }
  });
});
