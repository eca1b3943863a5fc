// The music provider: given a prompt and a duration, a stream of events (a
// title, audio chunks, a completion) produced as they are pulled. The
// endpoint writes them as NDJSON; the partner node assembles the audio.
// Implementations: providers/local/music synthesizes in process;
// providers/upstream/music forwards to a vendor.

export interface MusicRequest {
  prompt: string;
  /** Seconds of audio. */
  duration: number;
}

export interface MusicTitleEvent {
  type: 'title';
  copy_index: number;
  prompt_index: number;
  stream_index: number;
  title: string;
  display_tags: string[];
  summary?: string;
}

/**
 * A slice of one WAV file: the chunks of a stream, decoded from base64 and
 * concatenated in `index` order, are the file (the first one starts with its
 * RIFF header, whose sizes are those of the whole file).
 */
export interface MusicAudioChunkEvent {
  type: 'audio_chunk';
  copy_index: number;
  stream_index: number;
  index: number;
  content_type: 'audio/wav';
  /** Offset of these bytes in the file. */
  byte_offset: number;
  /** Base64 of the bytes. */
  data: string;
}

export interface MusicCompleteEvent {
  type: 'complete';
  copy_index: number;
  stream_index: number;
  content_type: 'audio/wav';
  /** Seconds of audio. */
  duration: number;
  sample_rate: number;
  channels: number;
  bits_per_sample: number;
  /** Bytes of the whole WAV file, header included. */
  byte_size: number;
  chunks: number;
  /** `blake3:<hex>` of the whole WAV file. */
  hash: string;
}

/** Terminal: the generation failed after the stream began. */
export interface MusicErrorEvent {
  type: 'error';
  code: string;
  message: string;
}

export type MusicEvent = MusicTitleEvent | MusicAudioChunkEvent | MusicCompleteEvent | MusicErrorEvent;

export interface MusicProvider {
  readonly name: string;
  /**
   * Events of one generation. Work happens as the caller pulls; leaving the
   * iteration early or aborting `signal` stops it. Throws MusicProviderError
   * when the generation cannot start or breaks; other event types may occur.
   */
  generate(request: MusicRequest, signal: AbortSignal): AsyncIterable<MusicEvent | { type: string }>;
  /** Called once when the service that was given this provider closes. */
  close?(): void | Promise<void>;
}

/**
 * A failure of the generator itself (a vendor's refusal, a broken stream).
 * `kind` says what the caller is told; the message is for the log only.
 */
export class MusicProviderError extends Error {
  override name = 'MusicProviderError';
  constructor(
    readonly kind: 'upstream' | 'rate_limited',
    message: string,
    /** Seconds, for rate_limited. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}
