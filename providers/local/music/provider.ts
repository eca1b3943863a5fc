// The default music provider: composes from the prompt (seeded from its
// hash) and synthesizes a 16-bit mono WAV in slices of `chunkSeconds`, each
// rendered only when the consumer asks for it, so one slice is all it holds
// and a consumer that goes away stops the work.

import { toBase64 } from '../../../lib/base64.ts';
import { createHasher } from '../../../lib/blake3.ts';
import type { MusicEvent, MusicProvider, MusicRequest } from '../../music.ts';
import { displayTags, KEY_NAMES, trackTitle } from './describe.ts';
import { createRenderer } from './render.ts';
import { barFrames, compose, romanProgression } from './score.ts';
import { WAV_HEADER_BYTES, wavFileBytes, wavHeader } from './wav.ts';

export interface LocalMusicOptions {
  /** Default 44100. */
  sampleRate?: number;
  /** Audio per chunk event, seconds. Default 0.5. */
  chunkSeconds?: number;
}

/** Gives the event loop a turn: rendering is CPU work, and aborts and other requests must get in. */
const yieldTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export function createLocalMusicProvider(opts: LocalMusicOptions = {}): MusicProvider {
  const sampleRate = opts.sampleRate ?? 44_100;
  const chunkFrames = Math.max(1, Math.round((opts.chunkSeconds ?? 0.5) * sampleRate));

  async function* generate(request: MusicRequest, signal: AbortSignal): AsyncGenerator<MusicEvent> {
    signal.throwIfAborted();
    const score = compose(request.prompt, request.duration, sampleRate);
    const stream = { copy_index: 0, stream_index: 0 };
    const key = `${KEY_NAMES[score.root]} ${score.minor ? 'minor' : 'major'}`;
    const bars = Math.ceil(score.frames / barFrames(score));
    yield {
      type: 'title',
      ...stream,
      prompt_index: 0,
      title: trackTitle(score.reading, score.root, score.minor),
      display_tags: displayTags(score.reading),
      summary: `${score.bpm} BPM in ${key}, ${romanProgression(score)} over ${bars} bar${bars === 1 ? '' : 's'}, ${score.timbre} lead.`,
    };

    const format = { sampleRate, channels: 1, frames: score.frames };
    const renderer = createRenderer(score);
    const hasher = await createHasher();
    let offset = 0;
    let index = 0;
    for (let start = 0; start < score.frames; start += chunkFrames) {
      await yieldTurn();
      signal.throwIfAborted();
      const count = Math.min(chunkFrames, score.frames - start);
      const head = index === 0 ? WAV_HEADER_BYTES : 0;
      const bytes = new Uint8Array(head + 2 * count);
      if (head > 0) bytes.set(wavHeader(format));
      renderer.render(start, count, bytes, head);
      await hasher.update(bytes);
      yield { type: 'audio_chunk', ...stream, index, content_type: 'audio/wav', byte_offset: offset, data: toBase64(bytes) };
      offset += bytes.length;
      index++;
    }
    yield {
      type: 'complete',
      ...stream,
      content_type: 'audio/wav',
      duration: score.frames / sampleRate,
      sample_rate: sampleRate,
      channels: 1,
      bits_per_sample: 16,
      byte_size: wavFileBytes(format),
      chunks: index,
      hash: await hasher.digest(),
    };
  }

  return { name: 'local', generate };
}
