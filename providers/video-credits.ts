// What a multi-frame video costs: credits per second of video by model and
// resolution, rounded up over the whole video. Seconds are summed in whole
// milliseconds so fractional durations cannot round a price up by accident.
import type { VideoModel, VideoRequest, VideoResolution } from './video.ts';

export const CREDITS_PER_SECOND: Record<VideoModel, Record<VideoResolution, number>> = {
  'gen-q2-turbo': { '540p': 1, '720p': 2, '1080p': 4 },
  'gen-q2-pro': { '540p': 2, '720p': 4, '1080p': 8 },
};

export function videoCredits(request: Pick<VideoRequest, 'image_settings' | 'model' | 'resolution'>): number {
  const ms = request.image_settings.reduce((n, s) => n + Math.round(s.duration * 1000), 0);
  return Math.ceil((ms * CREDITS_PER_SECOND[request.model][request.resolution]) / 1000);
}
