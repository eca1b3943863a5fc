// The video partner node in the local engine, through v2 jobs: a partner
// node in object_info, refused without the platform key, charged at the
// endpoint's price (InsufficientFundsError when the account cannot pay),
// its key frames given to the service's video provider in process, the
// video committed as a video output (decoded here); also with the upstream
// provider against the fake vendor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamVideoProvider } from '../providers/upstream/video.ts';
import { type FakeVideoVendor, startFakeVideoVendor } from './fakes/vendor-video.ts';
import { readApng } from './helpers/apng-reader.ts';
import { recordingCredits } from './helpers/credits.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { runJob, submit } from './helpers/jobs.ts';

const KEY = { api_key_platform_org: 'platform-key' };
const videoJob = (batch: number, inputs: Record<string, unknown> = {}) => ({
  frames: { class_type: 'EmptyImage', inputs: { width: 64, height: 36, batch_size: batch, color: 0xff0000 } },
  video: {
    class_type: 'VideogenMultiframe',
    inputs: { images: ['frames', 0], prompt: 'sunrise\nnoon', duration: 1, model: 'gen-q2-turbo', resolution: '540p', ...inputs },
  },
});

/** With the platform key; a video takes longer than the default wait. */
const runVideo = (h: Harness, workflow: Record<string, unknown>) => runJob(h, workflow, KEY, 20_000);

describe.each(MODES)('video partner node (%s)', (mode) => {
  let h: Harness;
  const credits = recordingCredits();
  const { charges } = credits;
  beforeAll(async () => {
    h = await startHarness(mode, { credits: credits.provider });
  });
  afterAll(() => h.close());

  it('is a partner node in object_info with the endpoint bounds on its inputs', async () => {
    const res = await h.fetch('/api/object_info/VideogenMultiframe');
    expect(res.status).toBe(200);
    const def = ((await res.json()) as any).VideogenMultiframe;
    expect(def).toMatchObject({ api_node: true, output: ['VIDEO'], output_node: true });
    expect(def.input.required).toMatchObject({
      images: ['IMAGE', expect.any(Object)],
      prompt: ['STRING', expect.objectContaining({ multiline: true })],
      duration: ['FLOAT', expect.objectContaining({ default: 5, min: 1, max: 10 })],
      model: [['gen-q2-pro', 'gen-q2-turbo'], expect.any(Object)],
      resolution: [['540p', '720p', '1080p'], expect.objectContaining({ default: '720p' })],
    });
  });

  it('turns the batch into a video output: one key frame per image, charged like the endpoint', async () => {
    charges.length = 0;
    const job = await runVideo(h, videoJob(3));
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    // 3 s of gen-q2-turbo at 540p.
    expect(charges).toEqual([['local', 3, 'multi-frame video']]);
    expect(job.outputs).toHaveLength(1);
    const [out] = job.outputs;
    expect(out).toMatchObject({ node_id: 'video', type: 'video', content_type: 'image/apng', name: 'videogen_00001_.apng' });
    const content = await h.fetch(out.url);
    expect(content.status).toBe(200);
    const apng = readApng(new Uint8Array(await content.arrayBuffer()));
    // Held 1 s, then two 1 s crossfades of 8 frames each; 64x36 scaled to fill 960x540.
    expect({ w: apng.width, h: apng.height, frames: apng.frames.length, ms: apng.durationMs }).toEqual({ w: 960, h: 540, frames: 17, ms: 3000 });
    expect(Array.from(apng.frames[16].rgb.subarray(0, 3))).toEqual([255, 0, 0]);
  });

  it('needs extra_data.api_key_platform_org: the submission is refused and nothing is charged', async () => {
    charges.length = 0;
    const { res, body } = await submit(h, { workflow: videoJob(2) });
    expect(res.status).toBe(422);
    expect(body.error).toMatchObject({ code: 'invalid_workflow' });
    expect(body.error.message).toMatch(/VideogenMultiframe|api_key_platform_org/);
    expect(charges).toEqual([]);
  });

  it('fails with InsufficientFundsError when the account cannot pay, with no output', async () => {
    const job = await credits.unpaid(() => runVideo(h, videoJob(2, { model: 'gen-q2-pro', resolution: '1080p' })));
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ exception_type: 'InsufficientFundsError', node_id: 'video', class_type: 'VideogenMultiframe' });
    expect(job.error.message).toMatch(/16 needed/);
    expect(job.outputs).toEqual([]);
  });

  it('refuses a batch of fewer than 2 or more than 9 images before charging', async () => {
    charges.length = 0;
    for (const batch of [1, 10]) {
      const job = await runVideo(h, videoJob(batch));
      expect(job.status).toBe('failed');
      expect(job.error).toMatchObject({ exception_type: 'ValidationError', node_id: 'video' });
      expect(job.error.message).toMatch(/2 to 9 key frames/);
    }
    expect(charges).toEqual([]);
  });
});

describe('video partner node with the upstream provider', () => {
  let vendor: FakeVideoVendor;
  let h: Harness;
  const provider = () => createUpstreamVideoProvider({ baseUrl: vendor.url, token: vendor.token, pollIntervalMs: 20, retryDelayMs: 20 });
  let upstream: ReturnType<typeof provider>;
  beforeAll(async () => {
    vendor = await startFakeVideoVendor();
    upstream = provider();
    h = await startHarness('in-process', { providers: { video: upstream } });
  });
  afterAll(async () => {
    await h.close();
    await upstream.close();
    await vendor.close();
  });

  it('sends the key frames to the vendor and commits its video', async () => {
    const job = await runVideo(h, videoJob(2, { prompt: 'only line' }));
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const sent = vendor.calls.find((c) => c.method === 'POST')!.body;
    expect(sent.image_settings.map((s: any) => [s.duration, s.prompt])).toEqual([
      [1, 'only line'],
      [1, 'only line'],
    ]);
    expect(Buffer.from(sent.image_settings[0].key_image, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const [out] = job.outputs;
    expect(out).toMatchObject({ type: 'video', content_type: 'video/mp4', name: 'videogen_00001_.mp4', size_bytes: vendor.video.length });
    expect(Buffer.from(await (await h.fetch(out.url)).arrayBuffer()).equals(Buffer.from(vendor.video))).toBe(true);
  });

  it('a vendor failure is a VideoGenerationError without the vendor words', async () => {
    vendor.script({ kind: 'task-failed' });
    const job = await runVideo(h, videoJob(2));
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ exception_type: 'VideoGenerationError', message: 'the video could not be generated' });
  });
});
