// The video provider: creates a multi-frame generation and reports its
// state until it has a video. The task system polls it and keeps the task
// record; the partner node calls it directly. Implementations:
// providers/local/video renders in process; providers/upstream/video
// forwards to a vendor.

export const VIDEO_MODELS = ['gen-q2-pro', 'gen-q2-turbo'] as const;
export const VIDEO_RESOLUTIONS = ['540p', '720p', '1080p'] as const;
export type VideoModel = (typeof VIDEO_MODELS)[number];
export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];

export interface VideoFrameSetting {
  /** Base64 image (bare or a data: URI) or an http(s) URL. */
  key_image: string;
  /** Seconds of video that end on this key frame. */
  duration: number;
  prompt: string;
}

/** A validated request, as the task record shows it (callback_url is the service's, not the provider's). */
export interface VideoRequest {
  image_settings: VideoFrameSetting[];
  model: VideoModel;
  resolution: VideoResolution;
  payload: string;
  /** '' when the request had none: the first key frame opens the video. */
  start_image: string;
}

export interface ProviderVideo {
  content_type: string;
  /** File extension of the output asset's name, without the dot. */
  extension: string;
  body: Uint8Array | AsyncIterable<Uint8Array>;
}

export type ProviderTaskState =
  | { state: 'queueing' | 'processing' }
  | { state: 'success'; video: ProviderVideo }
  /** `reason` is for the log; `details` only what the caller may read (a problem with its own input). */
  | { state: 'failed'; reason: string; details?: string[] }
  /** The provider does not know the id (a local provider after a restart): create the task again. */
  | { state: 'unknown' };

export interface VideoProvider {
  readonly name: string;
  /** Pause between two status calls, ms. */
  readonly pollIntervalMs: number;
  /** Wait before retrying a retryable failure, ms, doubling per try. Default 1000. */
  readonly retryDelayMs?: number;
  /** Problems of a valid request this provider cannot take, as error details; [] when none. */
  check?(request: VideoRequest): string[];
  /** Starts the generation; throws VideoProviderError when it cannot. */
  create(request: VideoRequest, signal: AbortSignal): Promise<{ id: string }>;
  /** The generation's state; throws VideoProviderError when it cannot tell. */
  status(id: string, signal: AbortSignal): Promise<ProviderTaskState>;
  /** Called once when the service that was given this provider closes (renders under way stop). */
  close?(): void | Promise<void>;
}

/** A provider's failure; `retryable` when trying again later may work (a 5xx, a timeout). The message is logged only. */
export class VideoProviderError extends Error {
  override name = 'VideoProviderError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
