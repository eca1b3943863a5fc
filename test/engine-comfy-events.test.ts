// The worker's live messages of a job, as the service shows them: the
// v2 event stream (progress snapshots naming node and step, the preview's
// bytes, outputs, the terminal status) and our /ws, whose messages and
// binary frames must be the worker's own, in the worker's order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import type { SentFrame } from './fakes/comfyui-worker.ts';
import { blake3Of } from './helpers/assets.ts';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { eventsOf, openEvents } from './helpers/sse-client.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';
import { connectWs, type Frame, type WsClient } from './helpers/ws-client.ts';

let s: WorkerService;
let c: WsClient;
beforeAll(async () => {
  s = await startWorkerService();
  c = await connectWs(s.base, { clientId: 'events' });
  c.send({ type: 'feature_flags', data: { supports_preview_metadata: true } });
  await c.waitFor('feature_flags', (f) => f.kind === 'text' && f.type === 'feature_flags');
});
afterAll(async () => {
  await c.close();
  await s.close();
});

/**
 * Stepper (progress), Show (ui text), FakeSampler (a binary preview with its one step: the real server's previews
 * come from samplers, none from PreviewImage), FakeProgressText (binary text frames).
 */
const WORKFLOW: Workflow = {
  n: { class_type: 'Number', inputs: { value: 2 } },
  st: { class_type: 'Stepper', inputs: { value: ['n', 0] } },
  sh: { class_type: 'Show', inputs: { value: ['st', 0] } },
  e: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color: 0xff8800 } },
  pv: { class_type: 'FakeSampler', inputs: { image: ['e', 0], seed: 0, steps: 1, sampler_name: 'euler' } },
  pi: { class_type: 'PreviewImage', inputs: { images: ['pv', 0] } },
  t: { class_type: 'FakeProgressText', inputs: { text: 'loading\nsampling\ndone' } },
};

const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at);
/** The image of a type-4 frame (the whole frame given). */
const previewImage = (frame: Uint8Array) => frame.subarray(8 + u32(frame, 4));

/** One line per message that carries job content; progress_state, status and feature_flags are left out. */
function describeJson(type: string, data: any): string | null {
  switch (type) {
    case 'execution_start':
    case 'execution_success':
      return type;
    case 'execution_cached':
      return `execution_cached:${[...data.nodes].sort().join(',')}`;
    case 'executing':
      return `executing:${data.node}`;
    case 'progress':
      return `progress:${data.node}:${data.value}/${data.max}`;
    case 'executed':
      return `executed:${data.node}:${JSON.stringify(data.output)}`;
    default:
      return null;
  }
}
const describeBinary = (frame: Uint8Array) =>
  u32(frame, 0) === 4 ? `preview:${Buffer.from(previewImage(frame)).toString('hex')}` : `binary:${Buffer.from(frame).toString('hex')}`;

/** What the worker sent the engine for this prompt, from execution_start to its final executing. */
function workerSequence(id: string): string[] {
  const w = s.workers[0];
  const sid = s.clientIdOn(w);
  const frames = w.sent.filter((f: SentFrame) => f.sid === sid);
  const start = frames.findIndex((f) => f.type === 'execution_start' && f.data?.prompt_id === id);
  const end = frames.findIndex((f, i) => i > start && f.type === 'executing' && f.data?.node === null && f.data?.prompt_id === id);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  return frames.slice(start, end + 1).flatMap((f) => {
    const line = f.bytes ? describeBinary(f.bytes) : describeJson(f.type, f.data);
    return line === null ? [] : [line];
  });
}

/** What our /ws sent for the job, from execution_start to its final executing. */
function ourSequence(id: string): string[] {
  const start = c.frames.findIndex((f) => f.kind === 'text' && f.type === 'execution_start' && f.data.prompt_id === id);
  const end = c.frames.findIndex(
    (f, i) => i > start && f.kind === 'text' && f.type === 'executing' && f.data.node === null && f.data.prompt_id === id,
  );
  return c.frames.slice(start, end + 1).flatMap((f: Frame) => {
    const line = f.kind === 'binary' ? describeBinary(f.bytes) : describeJson(f.type, f.data);
    return line === null ? [] : [line];
  });
}

async function run(workflow: Workflow) {
  // Slow nodes on the worker, so the event stream is open before the first one runs.
  s.workers[0].failures.nodeDelayMs = 40;
  const job = await submitOk(s, workflow);
  const { res, sse } = await openEvents(s, job.id);
  expect(res.status).toBe(200);
  const items = eventsOf(await sse!.readToEnd(10_000));
  s.workers[0].failures.nodeDelayMs = 0;
  await c.waitFor(`end of ${job.id}`, (f) => f.kind === 'text' && f.type === 'executing' && f.data.node === null && f.data.prompt_id === job.id);
  return { id: job.id as string, items };
}

describe('worker events through the service', () => {
  it("/ws carries the worker's messages and binary frames for the job, in the worker's order", async () => {
    const { id } = await run(WORKFLOW);
    const ours = ourSequence(id);
    expect(ours).toEqual(workerSequence(id));
    // The run had all of it: progress steps, a preview, text frames, executed outputs, the end.
    expect(ours[0]).toBe('execution_start');
    expect(ours.slice(-2)).toEqual(['execution_success', 'executing:null']);
    expect(ours).toContain('progress:st:3/3');
    expect(ours.filter((l) => l.startsWith('preview:'))).toHaveLength(1);
    expect(ours.filter((l) => l.startsWith('binary:00000003'))).toHaveLength(3);
    expect(ours).toContain('executed:sh:{"text":["2"]}');
    // The preview's bytes are a PNG, and the text frames name their node.
    const [preview] = c.frames.flatMap((f) => (f.kind === 'binary' && f.type === 4 ? [f.bytes] : []));
    expect([...previewImage(preview).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    const meta = JSON.parse(Buffer.from(preview.subarray(8, 8 + u32(preview, 4))).toString());
    expect(meta).toMatchObject({ node_id: 'pv', prompt_id: id });
    const texts = c.frames
      .flatMap((f) => (f.kind === 'binary' && f.type === 3 ? [f.bytes] : []))
      .map((b) => {
        const n = u32(b, 4);
        return [Buffer.from(b.subarray(8, 8 + n)).toString(), Buffer.from(b.subarray(8 + n)).toString()];
      });
    expect(texts).toEqual([
      ['t', 'loading'],
      ['t', 'sampling'],
      ['t', 'done'],
    ]);
  });

  it("a second run reports the worker's cached nodes, still in the worker's order", async () => {
    const { id } = await run(WORKFLOW);
    const ours = ourSequence(id);
    expect(ours).toEqual(workerSequence(id));
    const cached = ours.find((l) => l.startsWith('execution_cached:'))!;
    expect(cached.slice('execution_cached:'.length).split(',')).toEqual(expect.arrayContaining(['e', 'n', 'st']));
  });

  it('the v2 event stream: progress naming node, class and step, the preview bytes, outputs, then succeeded', async () => {
    const { id, items } = await run({
      ...WORKFLOW,
      n: { class_type: 'Number', inputs: { value: 5 } },
      e: { ...WORKFLOW.e, inputs: { ...WORKFLOW.e.inputs, color: 0x0088ff } },
    });
    const kinds = items.map((i) => i.event);
    expect(items[0].event).toBe('status');
    expect(items.at(-1)!.event).toBe('status');
    expect(items.at(-1)!.json.status).toBe('succeeded');
    expect(items.at(-1)!.json.progress).toMatchObject({ value: 1, current_node: null });

    const steps = items.filter((i) => i.event === 'progress' && i.json.current_node === 'st' && i.json.step !== null).map((i) => i.json);
    expect(steps.map((p) => [p.step, p.steps, p.current_node_class, p.message])).toEqual([
      [1, 3, 'Stepper', 'Stepper 1/3'],
      [2, 3, 'Stepper', 'Stepper 2/3'],
      [3, 3, 'Stepper', 'Stepper 3/3'],
    ]);
    const values = items.filter((i) => i.event === 'progress').map((i) => i.json.value);
    expect(values).toEqual([...values].sort((a, b) => a - b));

    // The preview is the worker's, byte for byte.
    const previews = items.filter((i) => i.event === 'preview');
    expect(previews).toHaveLength(1);
    expect(previews[0].json).toMatchObject({ node_id: 'pv', content_type: 'image/png' });
    const w = s.workers[0];
    const sent = w.sent.filter((f) => f.type === 'binary:4' && f.sid === s.clientIdOn(w)).at(-1)!;
    expect(Buffer.from(previews[0].json.data_base64, 'base64').equals(Buffer.from(previewImage(sent.bytes!)))).toBe(true);

    // Outputs (the two nodes that showed text) come as their nodes finish, while the job runs, before the end.
    const outputs = items.filter((i) => i.event === 'output');
    expect(outputs.map((o) => o.json.node_id).sort()).toEqual(['sh', 't']);
    for (const o of outputs) {
      expect(items.indexOf(o)).toBeGreaterThan(items.findIndex((i) => i.event === 'progress' && i.json.current_node === o.json.node_id));
      expect(items.indexOf(o)).toBeLessThan(items.length - 1);
    }
    expect(kinds.indexOf('output')).toBeLessThan(kinds.lastIndexOf('progress'));
    const done = await waitForJob(s, id, 'succeeded');
    expect(done.outputs.map((o: any) => o.id).sort()).toEqual(outputs.map((o) => o.json.id).sort());
  });

  it("the file an /ws executed message names by content downloads through /api/view with the worker's bytes", async () => {
    const { id } = await run({
      e: { class_type: 'EmptyImage', inputs: { width: 3, height: 3, batch_size: 1, color: 0x00ff00 } },
      s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'named' } },
    });
    const executed = c.jobMessages(id).find((m) => m.type === 'executed' && m.data.node === 's')!;
    const [ref] = executed.data.output.images;
    expect(ref.type).toBe('output');
    const r = await s.fetch(`/api/view?filename=${encodeURIComponent(ref.filename)}&type=output`, { redirect: 'manual' });
    expect(r.status).toBe(302);
    const bytes = new Uint8Array(await (await s.fetch(r.headers.get('location')!)).arrayBuffer());
    const [file] = s.workers[0].queue.history.get(id)!.outputs.s.images as Array<{ filename: string }>;
    expect(Buffer.from(bytes).equals(Buffer.from(s.workerFile(s.workers[0], 'output', file.filename)))).toBe(true);
    // Not the worker's file name (another job's worker may write one just like it): the content's.
    expect(file.filename).toBe('named_00001_.png');
    expect(ref.filename).toBe(`${(await blake3Of(bytes)).slice('blake3:'.length)}.png`);
  });
});
