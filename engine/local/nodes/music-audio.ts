// A music provider's events as the bytes of the WAV they carry, in order,
// checked as they pass: chunks contiguous from the RIFF header on, sizes as
// the completion event says. The title is kept; unknown event types are
// skipped; an error event ends it as a failure.
import { fromBase64 } from '../../../lib/base64.ts';
import type { MusicCompleteEvent, MusicTitleEvent } from '../../../providers/music.ts';

export class MusicStreamError extends Error {
  override name = 'MusicStreamError';
  readonly exception_type = 'MusicGenerationError';
}

export interface MusicAudio {
  /** The WAV's bytes, chunk by chunk, as the provider makes them. */
  bytes: AsyncGenerator<Uint8Array>;
  title(): MusicTitleEvent | undefined;
  complete(): MusicCompleteEvent | undefined;
}

export function musicAudio(events: AsyncIterable<{ type: string }>, onProgress: (done: number, total: number) => void): MusicAudio {
  let title: MusicTitleEvent | undefined;
  let complete: MusicCompleteEvent | undefined;
  async function* bytes(): AsyncGenerator<Uint8Array> {
    let offset = 0;
    let total = 0;
    for await (const event of events) {
      if (event.type === 'title') title = event as MusicTitleEvent;
      else if (event.type === 'error') throw new MusicStreamError('the music generator failed');
      else if (event.type === 'audio_chunk') {
        const chunk = event as { byte_offset?: unknown; data?: unknown };
        if (chunk.byte_offset !== offset || typeof chunk.data !== 'string') throw new MusicStreamError('the music stream skipped or repeated audio');
        let data: Uint8Array;
        try {
          data = fromBase64(chunk.data);
        } catch {
          throw new MusicStreamError('the music stream carried audio that is not base64');
        }
        if (offset === 0) {
          if (data.length < 44 || new TextDecoder().decode(data.subarray(0, 4)) !== 'RIFF')
            throw new MusicStreamError('the music stream does not start with a WAV header');
          total = new DataView(data.buffer, data.byteOffset).getUint32(4, true) + 8;
        }
        offset += data.length;
        onProgress(offset, total);
        yield data;
      } else if (event.type === 'complete') {
        complete = event as MusicCompleteEvent;
        if (complete.byte_size !== offset) throw new MusicStreamError(`the music stream ended at ${offset} bytes, not ${complete.byte_size}`);
      }
    }
    if (!complete) throw new MusicStreamError('the music stream ended without its completion');
  }
  return { bytes: bytes(), title: () => title, complete: () => complete };
}
