// MusicgenTextToMusic: the partner node of POST /proxy/musicgen/t2m/generate.
// It calls the service's music provider in process (the same one, with the
// same bounds and price), charges the job's account, and commits the WAV as
// an audio output while it streams in; its AUDIO output names that asset.
import { DEFAULT_DURATION, durationProblem, MAX_DURATION, MIN_DURATION, musicCredits, promptProblem } from '../../../providers/music-limits.ts';
import { defineNode } from '../define-node.ts';
import { MusicStreamError, musicAudio } from './music-audio.ts';
import { InsufficientFundsError, PartnerUnavailableError, PartnerValidationError } from './partner-errors.ts';

/** The AUDIO value the node outputs: the committed WAV and what it holds. */
export interface AudioRef {
  asset_id: string;
  filename: string;
  content_type: 'audio/wav';
  duration: number;
  sample_rate: number;
  channels: number;
  title: string | undefined;
}

export const musicgenTextToMusic = defineNode({
  name: 'MusicgenTextToMusic',
  display_name: 'Musicgen Text to Music',
  category: 'api node/audio/Musicgen',
  description: 'Generates music from a text prompt through the musicgen endpoint, saved as a WAV output of the job.',
  required: {
    prompt: ['STRING', { multiline: true, default: '', tooltip: 'What the music should sound like.' }],
    duration: ['FLOAT', { default: DEFAULT_DURATION, min: MIN_DURATION, max: MAX_DURATION, step: 0.5, tooltip: 'Seconds of audio.' }],
  },
  outputs: [{ type: 'AUDIO' }],
  output_node: true,
  api_node: true,
  // Each run is a paid generation.
  cacheable: false,
  async run(inputs, ctx) {
    const prompt = String(inputs.prompt ?? '').trim();
    const duration = Number(inputs.duration ?? DEFAULT_DURATION);
    const problem = promptProblem(prompt) ?? durationProblem(duration);
    if (problem) throw new PartnerValidationError(problem);
    const partner = ctx.partner;
    const provider = partner?.providers.music;
    if (!partner || !provider) throw new PartnerUnavailableError('this engine runs without the service, so it cannot generate music');
    // The contract asks partner calls for the caller's platform key, as the hosted nodes send it.
    if (!partner.api_key)
      throw new PartnerValidationError('MusicgenTextToMusic is a partner node: submit the job with extra_data.api_key_platform_org');

    const credits = musicCredits(duration);
    if (!(await partner.charge(credits, 'music generation'))) {
      throw new InsufficientFundsError(`the account has not enough credits for music generation (${credits} needed)`);
    }
    const audio = musicAudio(provider.generate({ prompt, duration }, ctx.signal), (done, total) => ctx.progress(done, total));
    const filename = 'musicgen_00001_.wav';
    let asset;
    try {
      asset = await ctx.commitOutput({ name: filename, type: 'audio', content_type: 'audio/wav', body: audio.bytes });
    } catch (err) {
      if (ctx.signal.aborted || err instanceof MusicStreamError) throw err;
      // As on the endpoint: what the generator said stays out of the job's error.
      throw new MusicStreamError('the music generator failed', { cause: err });
    }
    const complete = audio.complete()!;
    const title = audio.title()?.title;
    if (title) ctx.text(title);
    const ref: AudioRef = {
      asset_id: asset.id,
      filename,
      content_type: 'audio/wav',
      duration: complete.duration,
      sample_rate: complete.sample_rate,
      channels: complete.channels,
      title,
    };
    return { outputs: [ref], ui: { audio: [{ filename, subfolder: '', type: 'output' }] } };
  },
});

export const musicNodes = [musicgenTextToMusic];
