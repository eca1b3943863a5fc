// The music partner node in the local engine, through v2 jobs: it needs the
// platform key, charges the job's account at the endpoint's price (an
// InsufficientFundsError when it cannot pay), calls the service's provider
// in process and commits an audio/wav output of the asked duration, the same
// bytes the endpoint streams; a canceled job stops the generator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalMusicProvider } from '../providers/local/music/provider.ts';
import { createUpstreamMusicProvider } from '../providers/upstream/music.ts';
import { startFakeMusicVendor } from './fakes/vendor-music.ts';
import { recordingCredits } from './helpers/credits.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { cancelJob, runJob, submit, until, waitForJob } from './helpers/jobs.ts';
import { type Counted, counting, expectWav, generate, readMusic } from './helpers/music.ts';

const KEY = { api_key_platform_org: 'platform-key' };
const musicJob = (prompt: unknown, duration: unknown) => ({ '1': { class_type: 'MusicgenTextToMusic', inputs: { prompt, duration } } });

describe.each(MODES)('music partner node (%s)', (mode) => {
  let h: Harness;
  let counted: Counted;
  const credits = recordingCredits();
  const { charges } = credits;
  beforeAll(async () => {
    counted = counting(createLocalMusicProvider());
    h = await startHarness(mode, { providers: { music: counted.provider }, credits: credits.provider });
  });
  afterAll(() => h.close());

  it('is a partner node in object_info, with the endpoint bounds on its inputs', async () => {
    const res = await h.fetch('/api/object_info/MusicgenTextToMusic');
    expect(res.status).toBe(200);
    const def = ((await res.json()) as any).MusicgenTextToMusic;
    expect(def.api_node).toBe(true);
    expect(def.output).toEqual(['AUDIO']);
    expect(def.output_node).toBe(true);
    expect(def.input.required.prompt[0]).toBe('STRING');
    expect(def.input.required.duration).toEqual(['FLOAT', expect.objectContaining({ default: 30, min: 1, max: 300 })]);
  });

  it('makes an audio/wav output of the asked duration: the bytes the endpoint streams for the same prompt', async () => {
    charges.length = 0;
    const job = await runJob(h, musicJob('nostalgic folk guitar', 2.5), KEY);
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    expect(charges).toEqual([['local', 1, 'music generation']]);
    expect(job.outputs).toHaveLength(1);
    const [out] = job.outputs;
    expect(out).toMatchObject({ node_id: '1', type: 'audio', content_type: 'audio/wav', name: 'musicgen_00001_.wav' });

    const content = await h.fetch(out.url);
    expect(content.status).toBe(200);
    const bytes = new Uint8Array(await content.arrayBuffer());
    expect(bytes.length).toBe(out.size_bytes);
    const wav = expectWav(bytes, 2.5);
    expect(wav.sampleRate).toBe(44100);

    const streamed = await readMusic(await generate(h, { prompt: 'nostalgic folk guitar', duration: '2.5' }));
    expect(Buffer.from(bytes).equals(Buffer.from(streamed.wav))).toBe(true);
    expect(out.hash).toBe(streamed.complete.hash);
  });

  it('without extra_data.api_key_platform_org the v2 submission is refused (422) and nothing is charged', async () => {
    charges.length = 0;
    const { res, body } = await submit(h, { workflow: musicJob('no key', 1) });
    expect(res.status).toBe(422);
    expect(body.error).toMatchObject({ code: 'invalid_workflow', details: { reason: 'api_key_required' } });
    expect(body.error.message).toMatch(/api_key_platform_org/);
    expect(body.error.details.node_errors).toEqual({
      '1': [{ field: 'extra_data.api_key_platform_org', reason: 'api_key_required', message: expect.any(String) }],
    });
    const empty = await submit(h, { workflow: musicJob('no key', 1), extra_data: { api_key_platform_org: '' } });
    expect(empty.res.status).toBe(422);
    expect(charges).toEqual([]);
  });

  it('an account that cannot pay: InsufficientFundsError, no output', async () => {
    charges.length = 0;
    const job = await credits.unpaid(() => runJob(h, musicJob('unpaid', 25), KEY));
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ exception_type: 'InsufficientFundsError', node_id: '1' });
    expect(job.outputs).toEqual([]);
    expect(charges).toEqual([['local', 3, 'music generation']]);
  });

  it('inputs out of bounds: the duration refused at submission, an empty prompt when it runs', async () => {
    const { res, body } = await submit(h, { workflow: musicJob('x', 0.5), extra_data: KEY });
    expect(res.status).toBe(422);
    expect(body.error.code).toBe('invalid_workflow');
    const job = await runJob(h, musicJob('   ', 5), KEY);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ exception_type: 'ValidationError' });
    expect(job.error.message).toMatch(/prompt: must not be empty/);
  });

  it('a canceled job stops the generator', async () => {
    // Counted before the submission: an idle service starts the job with it, so its run may begin before the answer.
    const before = counted.runs.length;
    const { body } = await submit(h, { workflow: musicJob('a long job', 300), extra_data: KEY });
    await until('the generator started', () => counted.runs.length > before && counted.runs.at(-1)!.produced > 2, 5_000);
    expect((await cancelJob(h, body.id)).res.status).toBeLessThan(300);
    const run = counted.runs.at(-1)!;
    await until('the generator ended', () => run.finished, 5_000);
    expect(run.aborted).toBe(true);
    expect(run.produced).toBeLessThan(100);
    await waitForJob(h, body.id, 'canceled');
  });
});

describe('music partner node with the upstream provider', () => {
  it('calls the vendor in process and commits what it streamed', async () => {
    const vendor = await startFakeMusicVendor();
    const provider = createUpstreamMusicProvider({ baseUrl: vendor.url, token: vendor.token });
    const h = await startHarness('in-process', { providers: { music: provider } });
    try {
      const job = await runJob(h, musicJob('upbeat disco', 1), KEY);
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      expect(vendor.requests.at(-1)).toMatchObject({ prompt: 'upbeat disco', duration: '1', ended: true });
      const bytes = new Uint8Array(await (await h.fetch(job.outputs[0].url)).arrayBuffer());
      expectWav(bytes, 1);

      vendor.script({ kind: 'drop', after: 2 });
      const broken = await runJob(h, musicJob('upbeat disco', 1), KEY);
      expect(broken.status).toBe('failed');
      expect(broken.error).toMatchObject({ exception_type: 'MusicGenerationError', message: 'the music generator failed' });
      expect(broken.outputs).toEqual([]);
    } finally {
      await h.close();
      await provider.close();
      await vendor.close();
    }
  });
});
