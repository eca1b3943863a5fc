// The fake engine worker (test/fakes/comfyui-worker.ts) checked against the
// reference's facts with plain fetch and `ws` clients: the 400 body, the
// queue, history, view, upload naming, WebSocket message order, binary
// frames, interrupts and cancels, and each failure switch.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { createImageBatch } from '../lib/image/batch.ts';
import { imageBatchToPng } from '../lib/image/png-batch.ts';
import { ERROR_CATALOG, type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import { connectRecorder, type WsRecorder } from './fakes/ws-recorder.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

let w: FakeWorker;
let open: WsRecorder[] = [];
beforeEach(async () => {
  w = await startFakeWorker();
  open = [];
});
afterEach(async () => {
  for (const r of open) r.close();
  await w.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${w.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
// Response bodies are checked field by field.
const body = (res: Response): Promise<any> => res.json();
const getJson = async (path: string) => body(await fetch(`${w.url}${path}`));
async function client(id: string = randomUUID(), featureFlags?: Record<string, unknown>) {
  const r = await connectRecorder(w.wsUrl, id, { featureFlags });
  open.push(r);
  await r.waitFor((f) => f.type === 'status');
  if (featureFlags) await r.waitFor((f) => f.type === 'feature_flags');
  return { id, r };
}
async function submit(prompt: Workflow, client_id: string, extra: Record<string, unknown> = {}) {
  const res = await post('/prompt', { prompt, client_id, ...extra });
  expect(res.status).toBe(200);
  return (await body(res)) as { prompt_id: string; number: number; node_errors: Record<string, unknown> };
}
const ended = (r: WsRecorder, id: string) => r.waitFor((f) => f.type === 'executing' && f.data?.node === null && f.data?.prompt_id === id);
const png = (rgb = 0.5) => {
  const img = createImageBatch(4, 3, 1);
  img.data.fill(rgb);
  return imageBatchToPng(img, 0);
};
function uploadForm(name: string, bytes: Uint8Array, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set('image', new Blob([bytes], { type: 'image/png' }), name);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return form;
}

describe('POST /prompt', () => {
  it('answers 400 with the reference body for each kind of failure', async () => {
    const missing = await post('/prompt', { prompt: { 1: { class_type: 'Nope', inputs: {} } } });
    expect(missing.status).toBe(400);
    const m = await body(missing);
    expect(m.error).toEqual({ type: 'missing_node_type', message: expect.any(String), details: expect.any(String), extra_info: expect.any(Object) });
    expect(m.node_errors).toEqual({});

    const bad = await post('/api/prompt', {
      prompt: { 1: { class_type: 'Number', inputs: { value: 500 } }, 2: { class_type: 'Show', inputs: { value: ['1', 0] } } },
    });
    expect(bad.status).toBe(400);
    const b = await body(bad);
    expect(b.error.type).toBe('prompt_outputs_failed_validation');
    expect(b.node_errors['1']).toMatchObject({ class_type: 'Number', dependent_outputs: ['2'] });
    expect(b.node_errors['1'].errors[0]).toMatchObject({ type: 'value_bigger_than_max', extra_info: { input_name: 'value' } });

    expect((await body(await post('/prompt', { client_id: 'x' }))).error.type).toBe('no_prompt');
  });

  it('accepts a prompt: prompt_id (given or made), number, node_errors; a used prompt_id too, as the real server does', async () => {
    const id = randomUUID();
    const ok = await submit(sumWorkflow('a'), 'c1', { prompt_id: id });
    expect(ok).toEqual({ prompt_id: id, number: 0, node_errors: {} });
    const next = await submit(sumWorkflow('b'), 'c1');
    expect(next.number).toBe(1);
    expect(next.prompt_id).toMatch(/^[0-9a-f-]{36}$/);
    const again = await post('/prompt', { prompt: sumWorkflow('a'), prompt_id: id });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ prompt_id: id, number: 2, node_errors: {} });
    // Any prompt_id is taken, as str() of it (the real server checks no form).
    const upperId = randomUUID().toUpperCase();
    const upper = await post('/prompt', { prompt: sumWorkflow('a'), prompt_id: upperId });
    expect([upper.status, (await body(upper)).prompt_id]).toEqual([200, upperId]);
    const numbered = await post('/prompt', { prompt: sumWorkflow('b'), prompt_id: 17 });
    expect([numbered.status, (await body(numbered)).prompt_id]).toEqual([200, '17']);
  });

  it('/queue shows extra_data as submitted, API keys included, without create_time; only history leaves the keys out', async () => {
    const { id: cid, r } = await client();
    const running = await submit(waitWorkflow(1, 50, 1000), cid, { extra_data: { api_key_comfy_org: 'k-0' } });
    const { prompt_id } = await submit(sumWorkflow('a'), cid, { extra_data: { api_key_comfy_org: 'k-1', extra_pnginfo: { a: 1 } } });
    await r.waitFor((f) => f.type === 'executing' && f.data?.prompt_id === running.prompt_id);
    const q = await getJson('/queue');
    expect(q.queue_running[0][3]).toEqual({ api_key_comfy_org: 'k-0', client_id: cid });
    expect(q.queue_pending[0][3]).toEqual({ api_key_comfy_org: 'k-1', extra_pnginfo: { a: 1 }, client_id: cid });
    await post('/interrupt', {});
    await ended(r, prompt_id);
    const entry = (await getJson(`/history/${prompt_id}`))[prompt_id];
    expect(entry.prompt[3]).toEqual({ extra_pnginfo: { a: 1 }, client_id: cid });
    expect(w.submissions.at(-1)!.body.extra_data).toMatchObject({ api_key_comfy_org: 'k-1' });
  });
});

describe('WebSocket messages', () => {
  it('status with sid on connect, then the reference order for a prompt, history written before the final executing', async () => {
    const { id: cid, r } = await client('client-1');
    expect(r.frames[0]).toEqual({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } }, sid: 'client-1' } });
    const flagged = await client('client-2', { supports_preview_metadata: true });
    expect(flagged.r.frames.find((f) => f.type === 'feature_flags')!.data).toEqual({ supports_preview_metadata: true, max_upload_size: 104857600 });
    const { prompt_id } = await submit(waitWorkflow(5, 10, 2), cid);
    let historyAtEnd: unknown;
    r.ws.on('message', async (raw, bin) => {
      if (!bin && JSON.parse(String(raw)).data?.node === null) historyAtEnd = await getJson(`/history/${prompt_id}`);
    });
    await ended(r, prompt_id);
    const seq = r.ofPrompt(prompt_id).map((f) => (f.type === 'executing' || f.type === 'executed' ? `${f.type}:${f.data!.node}` : f.type));
    expect(seq).toEqual([
      'execution_start',
      'execution_cached',
      'progress_state',
      'executing:w1',
      'progress_state',
      'progress_state',
      'executing:w2',
      'progress_state',
      'progress',
      'progress_state',
      'progress',
      'progress_state',
      'progress_state',
      'executing:w3',
      'executed:w3',
      'progress_state',
      'execution_success',
      'executing:null',
    ]);
    const frames = r.ofPrompt(prompt_id);
    expect(frames.find((f) => f.type === 'progress')!.data).toEqual({ value: 1, max: 2, prompt_id, node: 'w2' });
    expect(frames.find((f) => f.type === 'executed')!.data).toEqual({ node: 'w3', display_node: 'w3', output: { text: ['5'] }, prompt_id });
    const ps = frames.filter((f) => f.type === 'progress_state').at(-1)!.data as { nodes: Record<string, Record<string, unknown>> };
    expect(ps.nodes.w3).toEqual({
      value: 1,
      max: 1,
      state: 'finished',
      node_id: 'w3',
      prompt_id,
      display_node_id: 'w3',
      parent_node_id: null,
      real_node_id: 'w3',
    });
    // A status goes to every socket when the prompt is done, before the final executing.
    const i = r.frames.findIndex((f) => f.type === 'execution_success');
    expect(r.frames.slice(i).map((f) => f.type)).toEqual(['execution_success', 'status', 'executing']);
    await expect.poll(() => historyAtEnd).toMatchObject({ [prompt_id]: { status: { status_str: 'success' } } });
    expect(Object.keys((historyAtEnd as Record<string, object>)[prompt_id])).toEqual(['prompt', 'outputs', 'status', 'meta']);
    // Two statuses on submit: the prompt queued, then taken to run; every socket gets them.
    for (const frames of [r.frames, flagged.r.frames]) {
      const start = frames.findIndex((f) => f.type === 'execution_start');
      const before = frames.slice(0, start).filter((f) => f.type === 'status');
      expect(before.slice(-2).map((f) => (f.data as any).status.exec_info.queue_remaining)).toEqual([1, 1]);
    }
    expect(r.frames.slice(1, 4).map((f) => f.type)).toEqual(['status', 'status', 'execution_start']);
  });

  it('a second prompt reports the shared upstream in execution_cached', async () => {
    const { id: cid, r } = await client();
    const a = await submit(sumWorkflow('a'), cid);
    await ended(r, a.prompt_id);
    const b = await submit(sumWorkflow('b', 3, 5), cid);
    await ended(r, b.prompt_id);
    expect(r.ofPrompt(b.prompt_id).find((f) => f.type === 'execution_cached')!.data!.nodes).toEqual(['b1']);
    expect(r.ofPrompt(b.prompt_id).flatMap((f) => (f.type === 'executing' ? [f.data!.node] : []))).toEqual(['b2', 'b3', 'b4', null]);
  });

  it("messages go only to the prompt's client", async () => {
    const a = await client();
    const b = await client();
    const { prompt_id } = await submit(sumWorkflow('a'), a.id);
    await ended(a.r, prompt_id);
    expect(b.r.ofPrompt(prompt_id)).toEqual([]);
    expect(b.r.frames.some((f) => f.type === 'status')).toBe(true);
  });

  it("previews come with a sampler's steps: type 4 before the step to flagged clients, type 1 after it to others; PreviewImage sends none", async () => {
    const plain = await client();
    const meta = await client(randomUUID(), { supports_preview_metadata: true });
    const image = { class_type: 'EmptyImage', inputs: { width: 4, height: 4, batch_size: 1, color: 0xff0000 } };
    const shown = await submit({ 1: image, 2: { class_type: 'PreviewImage', inputs: { images: ['1', 0] } } }, plain.id);
    await ended(plain.r, shown.prompt_id);
    expect(plain.r.frames.filter((f) => f.type.startsWith('binary:'))).toEqual([]);

    const sampled = (color: number): Workflow => ({
      1: { ...image, inputs: { ...image.inputs, color } },
      2: { class_type: 'FakeSampler', inputs: { image: ['1', 0], seed: 1, steps: 2, sampler_name: 'euler' } },
      3: { class_type: 'PreviewImage', inputs: { images: ['2', 0] } },
    });
    const seq = (r: WsRecorder, id: string) => {
      const from = r.frames.findIndex((f) => f.type === 'execution_start' && f.data?.prompt_id === id);
      return r.frames
        .slice(from)
        .flatMap((f) => (f.type === 'progress' ? [`progress:${f.data!.value}`] : f.type.startsWith('binary:') ? [f.type] : []));
    };
    const p1 = await submit(sampled(0x00ff00), plain.id);
    await ended(plain.r, p1.prompt_id);
    expect(seq(plain.r, p1.prompt_id)).toEqual(['progress:1', 'binary:1', 'progress:2', 'binary:1']);
    const f1 = plain.r.frames.find((f) => f.type === 'binary:1')!;
    expect(new DataView(f1.bytes!.buffer, f1.bytes!.byteOffset).getUint32(0)).toBe(2);
    expect([...f1.bytes!.subarray(4, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47]);

    const p2 = await submit(sampled(0x0000ff), meta.id);
    await ended(meta.r, p2.prompt_id);
    expect(seq(meta.r, p2.prompt_id)).toEqual(['binary:4', 'progress:1', 'binary:4', 'progress:2']);
    const f4 = meta.r.frames.find((f) => f.type === 'binary:4')!;
    const len = new DataView(f4.bytes!.buffer, f4.bytes!.byteOffset).getUint32(0);
    expect(JSON.parse(Buffer.from(f4.bytes!.subarray(4, 4 + len)).toString())).toEqual({
      node_id: '2',
      prompt_id: p2.prompt_id,
      display_node_id: '2',
      parent_node_id: null,
      real_node_id: '2',
      image_type: 'image/png',
    });
    expect([...f4.bytes!.subarray(4 + len, 8 + len)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    // Each client got only its own prompt's previews.
    expect(plain.r.frames.filter((f) => f.type === 'binary:4')).toEqual([]);
    expect(meta.r.frames.filter((f) => f.type === 'binary:1')).toEqual([]);
  });

  it("progress text (binary type 3) goes to every socket, not only to the prompt's client", async () => {
    const mine = await client();
    const other = await client();
    const p = await submit({ t: { class_type: 'FakeProgressText', inputs: { text: 'one\ntwo' } } }, mine.id);
    await ended(mine.r, p.prompt_id);
    const texts = (r: WsRecorder) =>
      r.frames
        .filter((f) => f.type === 'binary:3')
        .map((f) => {
          const n = Buffer.from(f.bytes!).readUInt32BE(0);
          return [Buffer.from(f.bytes!.subarray(4, 4 + n)).toString(), Buffer.from(f.bytes!.subarray(4 + n)).toString()];
        });
    const expected = [
      ['t', 'one'],
      ['t', 'two'],
    ];
    expect(texts(mine.r)).toEqual(expected);
    await other.r.waitFor((f) => f.type === 'binary:3' && Buffer.from(f.bytes!).toString().endsWith('two'));
    expect(texts(other.r)).toEqual(expected);
    // The prompt's JSON messages still go to its client only.
    expect(other.r.ofPrompt(p.prompt_id)).toEqual([]);
  });
});

describe('queue, interrupt, cancel, history', () => {
  it('queue 5-tuples, queue_remaining, delete pending, interrupt the running prompt by id', async () => {
    const { id: cid, r } = await client();
    const run = await submit(waitWorkflow(1, 50, 1000), cid);
    const pend = await submit(sumWorkflow('p'), cid);
    await r.waitFor((f) => f.type === 'progress' && f.data?.prompt_id === run.prompt_id);
    const q = await getJson('/api/queue');
    expect(q.queue_running).toEqual([[run.number, run.prompt_id, waitWorkflow(1, 50, 1000), expect.objectContaining({ client_id: cid }), ['w3']]]);
    expect(q.queue_pending.map((i: unknown[]) => i[1])).toEqual([pend.prompt_id]);
    expect(await getJson('/prompt')).toEqual({ exec_info: { queue_remaining: 2 } });

    expect((await post('/queue', { delete: [pend.prompt_id, run.prompt_id] })).status).toBe(200);
    expect((await getJson('/queue')).queue_pending).toEqual([]);
    expect((await getJson('/queue')).queue_running).toHaveLength(1);

    // Another prompt's id does not interrupt the running one.
    await post('/interrupt', { prompt_id: randomUUID() });
    await new Promise((res) => setTimeout(res, 120));
    expect(w.queue.running?.item[1]).toBe(run.prompt_id);

    expect((await post('/interrupt', { prompt_id: run.prompt_id })).status).toBe(200);
    await ended(r, run.prompt_id);
    const types = r.ofPrompt(run.prompt_id).map((f) => f.type);
    expect(types.slice(-2)).toEqual(['execution_interrupted', 'executing']);
    expect(r.ofPrompt(run.prompt_id).find((f) => f.type === 'execution_interrupted')!.data).toEqual({
      prompt_id: run.prompt_id,
      node_id: 'w2',
      node_type: 'Wait',
      executed: ['w1'],
      timestamp: expect.any(Number),
    });
    const h = (await getJson(`/history/${run.prompt_id}`))[run.prompt_id];
    expect(h.status).toMatchObject({ status_str: 'error', completed: false });
    expect(h.status.messages.map((m: unknown[]) => m[0])).toEqual(['execution_start', 'execution_cached', 'execution_interrupted']);
    expect(await getJson(`/history/${pend.prompt_id}`)).toEqual({});
  });

  it('POST /interrupt without a body interrupts whatever runs; clear empties the pending queue', async () => {
    const { id: cid, r } = await client();
    const run = await submit(waitWorkflow(1, 50, 1000), cid);
    await submit(sumWorkflow('x'), cid);
    await r.waitFor((f) => f.type === 'progress');
    await post('/queue', { clear: true });
    await fetch(`${w.url}/interrupt`, { method: 'POST' });
    await ended(r, run.prompt_id);
    await w.idle();
    expect(await getJson('/queue')).toEqual({ queue_running: [], queue_pending: [] });
  });

  it('POST /api/jobs/{id}/cancel cancels pending and running prompts; switched off it is a 404', async () => {
    const { id: cid, r } = await client();
    const run = await submit(waitWorkflow(1, 50, 1000), cid);
    const pend = await submit(sumWorkflow('q'), cid);
    await r.waitFor((f) => f.type === 'progress');
    expect((await post(`/api/jobs/${pend.prompt_id}/cancel`, {})).status).toBe(200);
    expect((await getJson('/queue')).queue_pending).toEqual([]);
    expect((await post(`/api/jobs/${run.prompt_id}/cancel`, {})).status).toBe(200);
    await ended(r, run.prompt_id);
    expect((await post(`/api/jobs/${randomUUID()}/cancel`, {})).status).toBe(404);
    w.failures.jobCancelRoute = false;
    const again = await submit(waitWorkflow(2, 50, 1000), cid);
    expect((await post(`/api/jobs/${again.prompt_id}/cancel`, {})).status).toBe(404);
    await post('/interrupt', {});
  });

  it('GET /history lists entries with prompt, outputs, status and meta', async () => {
    const { id: cid, r } = await client();
    const a = await submit(sumWorkflow('a'), cid);
    const b = await submit(sumWorkflow('b', 1, 1), cid);
    await ended(r, b.prompt_id);
    const all = await getJson('/history');
    expect(Object.keys(all)).toEqual([a.prompt_id, b.prompt_id]);
    expect(all[b.prompt_id]).toMatchObject({
      prompt: [b.number, b.prompt_id, sumWorkflow('b', 1, 1), expect.any(Object), ['b4']],
      outputs: { b4: { text: ['2'] } },
      status: { status_str: 'success', completed: true },
      meta: { b4: { node_id: 'b4', display_node: 'b4' } },
    });
    expect(Object.keys(await getJson('/history?max_items=1'))).toEqual([b.prompt_id]);
  });
});

describe('files', () => {
  it('upload naming: same bytes reuse the name, others get "stem (n).ext", overwrite keeps it', async () => {
    const up = async (bytes: Uint8Array, fields: Record<string, string> = {}) =>
      body(await fetch(`${w.url}/upload/image`, { method: 'POST', body: uploadForm('cat.png', bytes, fields) }));
    expect(await up(png(0.1))).toEqual({ name: 'cat.png', subfolder: '', type: 'input' });
    expect((await up(png(0.1))).name).toBe('cat.png');
    expect((await up(png(0.2))).name).toBe('cat (1).png');
    expect((await up(png(0.3))).name).toBe('cat (2).png');
    expect((await up(png(0.2))).name).toBe('cat (1).png');
    expect((await up(png(0.4), { overwrite: 'true' })).name).toBe('cat.png');
    expect(await up(png(0.4), { subfolder: 'pets', type: 'temp' })).toEqual({ name: 'cat.png', subfolder: 'pets', type: 'temp' });
    expect((await fetch(`${w.url}/api/upload/image`, { method: 'POST', body: new FormData() })).status).toBe(400);
  });

  it('LoadImage reads an uploaded file; SaveImage and PreviewImage files are served by /view', async () => {
    const { id: cid, r } = await client();
    const bytes = png(0.7);
    const { name } = await body(await fetch(`${w.url}/api/upload/image`, { method: 'POST', body: uploadForm('in.png', bytes) }));
    const prompt: Workflow = {
      1: { class_type: 'LoadImage', inputs: { image: name } },
      2: { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'out' } },
      3: { class_type: 'PreviewImage', inputs: { images: ['1', 0] } },
    };
    const first = await submit(prompt, cid);
    await ended(r, first.prompt_id);
    // Another image for the same prefix (the same prompt would be served from the cache).
    const second = await submit(
      {
        ...prompt,
        4: { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
        2: { ...prompt[2], inputs: { ...prompt[2].inputs, images: ['4', 0] } },
      },
      cid,
    );
    await ended(r, second.prompt_id);
    const h = (await getJson(`/history/${second.prompt_id}`))[second.prompt_id];
    // The counter moves on as the real SaveImage's does.
    expect(h.outputs['2'].images).toEqual([{ filename: 'out_00002_.png', subfolder: '', type: 'output' }]);
    const temp = h.outputs['3'].images[0];
    expect(temp).toMatchObject({ subfolder: '', type: 'temp' });

    const out = await fetch(`${w.url}/api/view?filename=out_00002_.png&subfolder=&type=output`);
    expect(out.status).toBe(200);
    expect(out.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await out.arrayBuffer()).subarray(0, 4)).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    expect((await fetch(`${w.url}/view?filename=${temp.filename}&type=temp`)).status).toBe(200);
    expect(new Uint8Array(await (await fetch(`${w.url}/view?filename=${name}&type=input`)).arrayBuffer())).toEqual(bytes);
    expect((await fetch(`${w.url}/view?filename=../secret&type=output`)).status).toBe(400);
    expect((await fetch(`${w.url}/view?filename=%2Fetc%2Fpasswd`)).status).toBe(400);
    expect((await fetch(`${w.url}/view?filename=a.png&subfolder=../../x`)).status).toBe(403);
    expect((await fetch(`${w.url}/view?filename=nope.png&type=output`)).status).toBe(404);
  });

  it('FakeSaveFile writes audio / video / plain files with the real ui shapes', async () => {
    const { id: cid, r } = await client();
    const p = await submit(
      {
        a: { class_type: 'FakeSaveFile', inputs: { kind: 'audio', size: 100, filename_prefix: 'snd' } },
        v: { class_type: 'FakeSaveFile', inputs: { kind: 'video', size: 10, filename_prefix: 'vid' } },
      },
      cid,
    );
    await ended(r, p.prompt_id);
    const h = (await getJson(`/history/${p.prompt_id}`))[p.prompt_id];
    expect(h.outputs).toEqual({
      a: { audio: [{ filename: 'snd_00001_.flac', subfolder: '', type: 'output' }] },
      v: { images: [{ filename: 'vid_00001_.mp4', subfolder: '', type: 'output' }], animated: [true] },
    });
    expect((await (await fetch(`${w.url}/view?filename=snd_00001_.flac`)).arrayBuffer()).byteLength).toBe(100);
  });

  it('object_info and system_stats', async () => {
    const all = await getJson('/object_info');
    expect(all.SaveImage).toMatchObject({ name: 'SaveImage', output_node: true, input: { required: { images: ['IMAGE', expect.any(Object)] } } });
    expect(await getJson('/api/object_info/Number')).toEqual({ Number: all.Number });
    expect(await getJson('/object_info/Nope')).toEqual({});
    const stats = await getJson('/api/system_stats');
    expect(stats.system).toMatchObject({ os: expect.any(String), comfyui_version: expect.any(String) });
    expect(stats.devices[0]).toMatchObject({ type: 'cuda', vram_total: expect.any(Number), vram_free: expect.any(Number) });
  });
});

describe('execution errors', () => {
  it('a failing node: execution_error with the reference fields, history status error', async () => {
    const { id: cid, r } = await client();
    const p = await submit(
      {
        1: { class_type: 'Number', inputs: { value: 3 } },
        2: { class_type: 'Fail', inputs: { value: ['1', 0] } },
        3: { class_type: 'Show', inputs: { value: ['2', 0] } },
      },
      cid,
    );
    await ended(r, p.prompt_id);
    const err = r.ofPrompt(p.prompt_id).find((f) => f.type === 'execution_error')!.data!;
    expect(err).toEqual({
      prompt_id: p.prompt_id,
      node_id: '2',
      node_type: 'Fail',
      executed: ['1'],
      exception_message: 'cannot do that\n',
      exception_type: 'TypeError',
      traceback: expect.any(Array),
      current_inputs: { value: [3] },
      current_outputs: ['1'],
      timestamp: expect.any(Number),
    });
    expect(
      r
        .ofPrompt(p.prompt_id)
        .map((f) => f.type)
        .slice(-2),
    ).toEqual(['execution_error', 'executing']);
    // As Python's format_tb: a block of two lines per frame, the executor's first, the node's own last.
    const traceback = err.traceback as string[];
    for (const entry of traceback) expect(entry).toMatch(/^ {2}File "[^"]+", line \d+, in .+\n {4}\S.*\n$/);
    expect(traceback[0]).toContain('execution.py');
    expect(traceback.at(-1)).toMatch(/local-nodes\.ts", line \d+, in .*\n {4}throw new TypeError\('cannot do that'\);\n$/);
    const h = (await getJson(`/history/${p.prompt_id}`))[p.prompt_id];
    expect(h.status).toMatchObject({ status_str: 'error', completed: false });
    expect(h.status.messages.at(-1)[0]).toBe('execution_error');
  });

  it.each(['oom', 'model_missing', 'image_download', 'insufficient_funds', 'inactive_subscription', 'runtime'] as const)(
    'injected %s error mimics the real server',
    async (kind) => {
      const { id: cid, r } = await client();
      w.failures.error = { kind, class_type: 'Add' };
      const p = await submit(sumWorkflow('e'), cid);
      await ended(r, p.prompt_id);
      const err = r.ofPrompt(p.prompt_id).find((f) => f.type === 'execution_error')!.data!;
      expect(err).toMatchObject({ node_id: 'e3', node_type: 'Add', ...ERROR_CATALOG[kind], current_inputs: { a: [3], b: [4] } });
      expect(w.failures.error).toBeNull();
      if (kind === 'oom')
        expect(err).toMatchObject({ exception_type: 'torch.OutOfMemoryError', exception_message: expect.stringContaining('CUDA out of memory') });
      if (kind === 'model_missing') expect(err.exception_message).toMatch(/not found/);
    },
  );
});

describe('failure switches', () => {
  it('routes answer 500 (a number of times, or always)', async () => {
    w.failures.routes.push({ route: 'GET /history', times: 1 }, { route: 'POST /prompt' });
    expect((await fetch(`${w.url}/api/history/abc`)).status).toBe(500);
    expect((await fetch(`${w.url}/history/abc`)).status).toBe(200);
    expect((await post('/prompt', { prompt: sumWorkflow('a') })).status).toBe(500);
    expect((await fetch(`${w.url}/queue`)).status).toBe(200);
  });

  it('routes can hang or cut the connection instead of answering', async () => {
    w.failures.routes.push({ route: 'GET /object_info', hang: true, times: 1 }, { route: 'GET /view', cut: true, times: 1 });
    await expect(fetch(`${w.url}/object_info`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect((await fetch(`${w.url}/object_info`)).status).toBe(200);
    await expect(fetch(`${w.url}/view?filename=none.png`)).rejects.toThrow();
    expect((await fetch(`${w.url}/view?filename=none.png`)).status).toBe(404);
  });

  it('refuse() refuses connections, accept() listens again; crash() loses the queue and history', async () => {
    const { id: cid, r } = await client();
    const done = await submit(sumWorkflow('a'), cid);
    await ended(r, done.prompt_id);
    await w.refuse();
    await expect(fetch(`${w.url}/queue`)).rejects.toThrow();
    expect((await r.closed).code).toBe(1006);
    await w.accept();
    expect(Object.keys(await getJson('/history'))).toEqual([done.prompt_id]);
    await submit(waitWorkflow(1, 50, 1000), cid);
    await w.crash();
    await w.accept();
    // Let the client see that its pooled keep-alive socket was cut before it reuses it.
    await new Promise((res) => setTimeout(res, 50));
    expect(await getJson('/history')).toEqual({});
    expect(await getJson('/queue')).toEqual({ queue_running: [], queue_pending: [] });
  });

  it('blackhole: requests are never answered', async () => {
    w.failures.blackhole = true;
    await expect(fetch(`${w.url}/system_stats`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    w.failures.blackhole = false;
    expect((await fetch(`${w.url}/system_stats`)).status).toBe(200);
  });

  it('drops every WebSocket after the Nth message of a prompt; the prompt still completes', async () => {
    const { id: cid, r } = await client();
    w.failures.dropWebSocketsAfter = 3;
    const p = await submit(waitWorkflow(9, 100, 3), cid);
    expect((await r.closed).code).toBe(1006);
    expect(r.ofPrompt(p.prompt_id).length).toBeLessThanOrEqual(3);
    // A reconnecting client of the running prompt is told the node that runs.
    const again = await connectRecorder(w.wsUrl, cid);
    open.push(again);
    expect((await again.waitFor((f) => f.type === 'executing')).data).toEqual({ node: 'w2' });
    expect(again.frames[0].type).toBe('status');
    const entry = await w.queue.finished(p.prompt_id);
    expect(entry.status.status_str).toBe('success');
    await ended(again, p.prompt_id);
    expect(w.failures.dropWebSocketsAfter).toBeNull();
  });

  it('refuseWebSockets: upgrades are answered 503 while HTTP works', async () => {
    w.failures.refuseWebSockets = true;
    await expect(connectRecorder(w.wsUrl, 'x')).rejects.toThrow(/503/);
    expect((await fetch(`${w.url}/prompt`)).status).toBe(200);
  });

  it('hang: the prompt never finishes until interrupted ("stuck" ignores interrupts until unstick())', async () => {
    const { id: cid, r } = await client();
    w.failures.hang = 'interruptible';
    const p = await submit(sumWorkflow('h'), cid);
    await r.waitFor((f) => f.type === 'executing' && f.data?.node !== null);
    await new Promise((res) => setTimeout(res, 200));
    expect((await getJson('/queue')).queue_running).toHaveLength(1);
    await post('/interrupt', {});
    await ended(r, p.prompt_id);

    w.failures.hang = 'stuck';
    const s = await submit(waitWorkflow(4, 10, 1), cid);
    await r.waitFor((f) => f.type === 'executing' && f.data?.prompt_id === s.prompt_id);
    await post('/interrupt', {});
    await new Promise((res) => setTimeout(res, 200));
    expect((await getJson('/queue')).queue_running.map((i: unknown[]) => i[1])).toEqual([s.prompt_id]);
    // The GPU comes back: the interrupt sent meanwhile is honoured.
    w.unstick();
    await ended(r, s.prompt_id);
    expect((await getJson('/queue')).queue_running).toEqual([]);
    expect(w.queue.history.get(s.prompt_id)!.status.messages.map(([type]) => type)).toContain('execution_interrupted');
  });

  it('nodeDelayMs slows every node down', async () => {
    const { id: cid, r } = await client();
    w.failures.nodeDelayMs = 60;
    const t0 = Date.now();
    const p = await submit(sumWorkflow('s'), cid);
    await ended(r, p.prompt_id);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4 * 60 - 10);
  });
});
