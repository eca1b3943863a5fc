// The fake worker's /object_info and /system_stats have what the real
// server's have: V3 classes with every NodeInfoV1 field (display_name null),
// COMBO inputs whose values validation does not check, a `*` input, seeds up
// to 18446744073709551615 written as those digits, the four upload flags, and
// the templates versions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import { type FakeWorkerClient, fakeWorkerClient } from './helpers/fake-worker-client.ts';

let w: FakeWorker;
let c: FakeWorkerClient;
beforeAll(async () => {
  w = await startFakeWorker();
  c = fakeWorkerClient(w);
});
afterAll(async () => {
  c.close();
  await w.close();
});

describe('/object_info', () => {
  it('writes INT maxima of 2^64 - 1 as their digits', async () => {
    for (const path of ['/object_info', '/api/object_info/FakeSampler']) {
      const text = await (await fetch(`${w.url}${path}`)).text();
      expect(text).toContain('"seed":["INT",{"default":0,"min":0,"max":18446744073709551615,"control_after_generate":true}]');
      expect(text).not.toContain('U64_MAX');
    }
  });

  it('describes V3 classes with every NodeInfoV1 field, display_name null; V1 classes as before', async () => {
    const all = await c.getJson('/object_info');
    const sampler = all.FakeSampler;
    expect(Object.keys(sampler)).toEqual([
      'input',
      'input_order',
      'output',
      'output_is_list',
      'output_name',
      'output_tooltips',
      'name',
      'display_name',
      'description',
      'python_module',
      'category',
      'output_node',
      'deprecated',
      'experimental',
      'api_node',
    ]);
    expect(sampler).toMatchObject({
      display_name: null,
      output_tooltips: ['The sampled image.'],
      deprecated: false,
      experimental: false,
      api_node: false,
    });
    expect(all.FakeProgressText).toMatchObject({ display_name: null, output_tooltips: [], output_node: true });
    expect(all.SaveImage).not.toHaveProperty('output_tooltips');
    expect(all.SaveImage.display_name).toEqual(expect.any(String));
  });

  it('COMBO inputs have {options, multiselect}, and a value outside the options passes validation', async () => {
    const all = await c.getJson('/object_info');
    expect(all.FakeSampler.input.required.sampler_name).toEqual(['COMBO', { multiselect: false, options: ['euler', 'dpmpp_2m'], default: 'euler' }]);
    expect(all.FakeSaveFile.input.required.kind).toEqual(['COMBO', { multiselect: false, options: ['audio', 'video', 'file'], default: 'audio' }]);
    const res = await c.post('/prompt', {
      prompt: { f: { class_type: 'FakeSaveFile', inputs: { kind: 'not-a-kind', size: 4, filename_prefix: 'odd' } } },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { node_errors: unknown }).node_errors).toEqual({});
  });

  it('PreviewAny takes `*`; the loaders carry the upload flags', async () => {
    const all = await c.getJson('/object_info');
    expect(all.PreviewAny.input.required.source[0]).toBe('*');
    expect(all.LoadImage.input.required.image[1]).toMatchObject({ image_upload: true });
    expect(all.FakeLoadAudio.input.required.file).toEqual(['COMBO', { multiselect: false, options: [], audio_upload: true }]);
    expect(all.FakeLoadVideo.input.required.file[1]).toMatchObject({ video_upload: true });
    expect(all.FakeLoad3D.input.required.file[1]).toMatchObject({ file_upload: true });
  });

  it('a loader reads the uploaded file its COMBO input names', async () => {
    const { id, r } = await c.connect();
    const form = new FormData();
    form.set('image', new Blob([new Uint8Array(321)], { type: 'video/mp4' }), 'clip.mp4');
    expect(await (await fetch(`${w.url}/upload/image`, { method: 'POST', body: form })).json()).toMatchObject({ name: 'clip.mp4' });
    const p = await c.submit(
      { l: { class_type: 'FakeLoadVideo', inputs: { file: 'clip.mp4' } }, s: { class_type: 'Show', inputs: { value: ['l', 0] } } },
      id,
    );
    await c.ended(r, p.prompt_id);
    expect(w.queue.history.get(p.prompt_id)!.outputs).toEqual({ s: { text: ['321'] } });
  });
});

describe('/system_stats', () => {
  it('has the templates versions besides the frontend version', async () => {
    const { system } = await c.getJson('/api/system_stats');
    expect(system).toMatchObject({
      comfyui_version: '0.3.64',
      required_frontend_version: expect.any(String),
      installed_templates_version: expect.any(String),
      required_templates_version: expect.any(String),
    });
  });
});
