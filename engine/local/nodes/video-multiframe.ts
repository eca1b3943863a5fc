// VideogenMultiframe: the partner node of POST /proxy/videogen/multiframe.
// Kept simple: each image of the IMAGE batch is one key frame (2 to 9, in
// batch order), the prompt gives one line per key frame (fewer lines: the
// last one repeats), every key frame gets the same duration. It calls the
// service's video provider in process (same bounds, same price), charges
// the job's account, waits for the video and commits it as a video output;
// its VIDEO output names that asset.
import { toBase64 } from '../../../lib/base64.ts';
import { imageBatchToPng } from '../../../lib/image/png-batch.ts';
import { pause } from '../../../lib/pause.ts';
import { VIDEO_MODELS, VIDEO_RESOLUTIONS, type VideoProvider, VideoProviderError, type VideoRequest } from '../../../providers/video.ts';
import { videoCredits } from '../../../providers/video-credits.ts';
import {
  DEFAULT_DURATION,
  MAX_DURATION,
  MAX_FRAMES,
  MAX_PROMPT_CHARS,
  MIN_DURATION,
  MIN_FRAMES,
  overMaxChars,
} from '../../../providers/video-limits.ts';
import { defineNode, type NodeRunContext } from '../define-node.ts';
import { requireImage } from './image-ops.ts';
import { InsufficientFundsError, PartnerUnavailableError, PartnerValidationError } from './partner-errors.ts';

export class VideoGenerationError extends Error {
  override name = 'VideoGenerationError';
  readonly exception_type = 'VideoGenerationError';
}

/** The VIDEO value the node outputs: the committed video. */
export interface VideoRef {
  asset_id: string;
  filename: string;
  content_type: string;
  frames: number;
  duration: number;
}

const RETRIES = 3;

/** Calls the provider, retrying what may pass; what it says stays out of the job's error. */
async function attempt<T>(provider: VideoProvider, ctx: NodeRunContext, call: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await call();
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (!(err instanceof VideoProviderError && err.retryable) || n >= RETRIES)
        throw new VideoGenerationError('the video generator failed', { cause: err });
      await pause((provider.retryDelayMs ?? 1000) * 2 ** (n - 1), ctx.signal);
    }
  }
}

export const videogenMultiframe = defineNode({
  name: 'VideogenMultiframe',
  display_name: 'Videogen Multi-frame Video',
  category: 'api node/video/Videogen',
  description:
    'Generates a video through the videogen endpoint from 2 to 9 key frames (the images of the batch, in order), saved as a video output of the job.',
  required: {
    images: ['IMAGE', { tooltip: `The key frames, ${MIN_FRAMES} to ${MAX_FRAMES} images of one batch.` }],
    prompt: ['STRING', { multiline: true, default: '', tooltip: 'One line per key frame; the last line repeats for the rest.' }],
    duration: [
      'FLOAT',
      { default: DEFAULT_DURATION, min: MIN_DURATION, max: MAX_DURATION, step: 0.5, tooltip: 'Seconds of video ending on each key frame.' },
    ],
    model: [[...VIDEO_MODELS], { default: 'gen-q2-turbo' }],
    resolution: [[...VIDEO_RESOLUTIONS], { default: '720p' }],
  },
  outputs: [{ type: 'VIDEO' }],
  output_node: true,
  api_node: true,
  // Each run is a paid generation.
  cacheable: false,
  async run(inputs, ctx) {
    const images = requireImage(inputs.images, 'images');
    if (images.count < MIN_FRAMES || images.count > MAX_FRAMES) {
      throw new PartnerValidationError(`images: ${MIN_FRAMES} to ${MAX_FRAMES} key frames are needed, got a batch of ${images.count}`);
    }
    const duration = Number(inputs.duration ?? DEFAULT_DURATION);
    if (!(duration >= MIN_DURATION && duration <= MAX_DURATION))
      throw new PartnerValidationError(`duration: must be ${MIN_DURATION} to ${MAX_DURATION} seconds`);
    const model = String(inputs.model) as VideoRequest['model'];
    const resolution = String(inputs.resolution) as VideoRequest['resolution'];
    const lines = String(inputs.prompt ?? '').split('\n');
    const prompts = Array.from({ length: images.count }, (_, i) => (lines[Math.min(i, lines.length - 1)] ?? '').trim());
    if (prompts.some((p) => overMaxChars(p, MAX_PROMPT_CHARS)))
      throw new PartnerValidationError(`prompt: a line is at most ${MAX_PROMPT_CHARS} characters`);

    const partner = ctx.partner;
    const provider = partner?.providers.video;
    if (!partner || !provider) throw new PartnerUnavailableError('this engine runs without the service, so it cannot generate video');
    // The contract asks partner calls for the caller's platform key, as the hosted nodes send it.
    if (!partner.api_key)
      throw new PartnerValidationError('VideogenMultiframe is a partner node: submit the job with extra_data.api_key_platform_org');

    const request: VideoRequest = {
      image_settings: prompts.map((prompt, i) => ({ key_image: toBase64(imageBatchToPng(images, i, { level: 1 })), duration, prompt })),
      model,
      resolution,
      payload: '',
      start_image: '',
    };
    const problems = provider.check?.(request) ?? [];
    if (problems.length > 0) throw new PartnerValidationError(problems.join('; '));
    const credits = videoCredits(request);
    if (!(await partner.charge(credits, 'multi-frame video'))) {
      throw new InsufficientFundsError(`the account has not enough credits for a multi-frame video (${credits} needed)`);
    }

    const { id } = await attempt(provider, ctx, () => provider.create(request, ctx.signal));
    for (;;) {
      const st = await attempt(provider, ctx, () => provider.status(id, ctx.signal));
      if (st.state === 'success') {
        ctx.progress(2, 2);
        const filename = `videogen_00001_.${st.video.extension}`;
        let asset;
        try {
          asset = await ctx.commitOutput({ name: filename, type: 'video', content_type: st.video.content_type, body: st.video.body });
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          throw new VideoGenerationError('the video generator failed', { cause: err });
        }
        const ref: VideoRef = {
          asset_id: asset.id,
          filename,
          content_type: st.video.content_type,
          frames: images.count,
          duration: duration * images.count,
        };
        return { outputs: [ref], ui: { video: [{ filename, subfolder: '', type: 'output' }] } };
      }
      if (st.state === 'failed')
        throw new VideoGenerationError(
          st.details?.length ? `the video could not be generated: ${st.details.join('; ')}` : 'the video could not be generated',
        );
      if (st.state === 'unknown') throw new VideoGenerationError('the video generator lost the task');
      ctx.progress(st.state === 'queueing' ? 0 : 1, 2);
      await pause(provider.pollIntervalMs, ctx.signal);
    }
  },
});

export const videoNodes = [videogenMultiframe];
