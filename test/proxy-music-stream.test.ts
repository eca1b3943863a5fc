// The music stream as a client reads it: NDJSON lines as they arrive, the
// title event with exactly the contract's fields, audio chunks that join
// into a playable WAV of the asked duration, a completion that describes it,
// unknown event types skipped; the same prompt and duration give the same bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalMusicProvider } from '../providers/local/music/provider.ts';
import type { MusicProvider } from '../providers/music.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { blake3Hash, expectWav, generate, ndjsonEvents, readMusic, rms, TITLE_FIELDS } from './helpers/music.ts';

/** The local provider with event types no client knows mixed in. */
const withNovelties = (inner: MusicProvider): MusicProvider => ({
  name: 'novel',
  async *generate(request, signal) {
    let n = 0;
    for await (const event of inner.generate(request, signal)) {
      yield event;
      if (n++ === 1) yield { type: 'lyrics_line', text: 'la la la' };
    }
    yield { type: 'usage', credits: 1 };
  },
});

describe.each(MODES)('music stream (%s)', (mode) => {
  let h: Harness;
  let novel: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
    novel = await startHarness(mode, { providers: { music: withNovelties(createLocalMusicProvider()) } });
  });
  afterAll(async () => {
    await h.close();
    await novel.close();
  });

  it('a title with the contract fields, audio chunks, then the completion, one JSON object a line', async () => {
    const res = await generate(h, { prompt: 'Calm lo-fi piano in A minor, rainy night', duration: '3' });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-credits-charged')).toBe('1');
    const music = await readMusic(res);
    expect(music.types[0]).toBe('title');
    expect(music.types.at(-1)).toBe('complete');
    expect(music.types.slice(1, -1).every((t) => t === 'audio_chunk')).toBe(true);

    const title = music.title;
    expect(Object.keys(title).sort()).toEqual(TITLE_FIELDS);
    expect(title.type).toBe('title');
    for (const key of ['copy_index', 'prompt_index', 'stream_index']) {
      expect(Number.isInteger(title[key]), key).toBe(true);
      expect(title[key]).toBeGreaterThanOrEqual(0);
    }
    expect(title.title).toBe('Calm lo-fi piano in A minor');
    expect(title.display_tags).toEqual(['lo-fi', 'calm', 'piano']);
    expect(title.summary).toMatch(/^\d+ BPM in A minor, /);
  });

  it('title and tags come from the prompt; a prompt without known words still gets both', async () => {
    const a = await readMusic(await generate(h, { prompt: 'energetic synthwave with a saxophone, 120 bpm', duration: '1' }));
    expect(a.title.title).toBe(`Energetic synthwave saxophone in ${a.title.title.split(' in ')[1]}`);
    expect(a.title.display_tags).toEqual(['synthwave', 'energetic', 'saxophone']);
    expect(a.title.summary).toMatch(/^120 BPM/);
    const b = await readMusic(await generate(h, { prompt: 'zzz qqq', duration: '1' }));
    expect(b.title.title).toMatch(/^Instrumental piece in [A-G][#b]? (major|minor)$/);
    expect(b.title.display_tags).toEqual(['instrumental']);
  });

  it.each([
    [3, '3'],
    [2.5, '2.5'],
    [1, '1'],
  ])('the chunks join into a valid 16-bit WAV of %s s, as the completion says', async (seconds, duration) => {
    const music = await readMusic(await generate(h, { prompt: 'gentle harp lullaby', duration }));
    const wav = expectWav(music.wav, seconds);
    expect(wav.sampleRate).toBe(44100);
    expect(wav.channels).toBe(1);
    expect(wav.dataSize).toBe(44100 * 1 * 2 * seconds);

    let offset = 0;
    music.chunks.forEach((chunk, i) => {
      expect(chunk.index).toBe(i);
      expect(chunk.byte_offset).toBe(offset);
      expect(chunk.content_type).toBe('audio/wav');
      offset += Buffer.from(chunk.data, 'base64').length;
    });
    // Half a second of audio per chunk, the header in the first.
    expect(music.chunks).toHaveLength(Math.ceil(seconds / 0.5));
    expect(Buffer.from(music.chunks[0].data, 'base64').length).toBe(44 + 44100);

    expect(music.complete).toEqual({
      type: 'complete',
      copy_index: 0,
      stream_index: 0,
      content_type: 'audio/wav',
      duration: seconds,
      sample_rate: 44100,
      channels: 1,
      bits_per_sample: 16,
      byte_size: music.wav.length,
      chunks: music.chunks.length,
      hash: await blake3Hash(music.wav),
    });
    // Sound, not silence, and not clipped flat.
    expect(rms(wav.samples)).toBeGreaterThan(0.05);
    expect(rms(wav.samples)).toBeLessThan(0.6);
  });

  it('the same prompt and duration give the same bytes; another prompt or duration others', async () => {
    const prompt = 'dark cinematic strings in D minor';
    const run = async (p: string, duration: string) => readMusic(await generate(h, { prompt: p, duration }));
    const a = await run(prompt, '2');
    const b = await run(prompt, '2');
    const other = await run(`${prompt}!`, '2');
    const longer = await run(prompt, '3');
    expect(Buffer.from(a.wav).equals(Buffer.from(b.wav))).toBe(true);
    expect(a.title).toEqual(b.title);
    expect(Buffer.from(a.wav).equals(Buffer.from(other.wav))).toBe(false);
    expect(longer.wav.length).toBeGreaterThan(a.wav.length);
    // A longer track of the same prompt is the same piece: it starts alike (up to the final fade-out).
    const fadeStart = 44 + 2 * (2 * 44100 - Math.floor((2 * 44100) / 4));
    expect(Buffer.from(longer.wav.subarray(44, fadeStart)).equals(Buffer.from(a.wav.subarray(44, fadeStart)))).toBe(true);
  });

  it('the bytes of a prompt are fixed: this build synthesizes what every build does', async () => {
    const music = await readMusic(await generate(h, { prompt: 'happy jazz piano', duration: '2' }));
    expect(music.complete.hash).toBe(GOLDEN_HASH);
  });

  it('a client ignores event types it does not know and still gets the whole track', async () => {
    const music = await readMusic(await generate(novel, { prompt: 'playful ukulele', duration: '1.5' }));
    expect(music.skipped).toEqual(['lyrics_line', 'usage']);
    expectWav(music.wav, 1.5);
    expect(music.complete.byte_size).toBe(music.wav.length);
  });

  it('lines reach the client as they are produced, not when the track is done', async () => {
    const res = await generate(h, { prompt: 'slow ambient bells', duration: '240' });
    const events = ndjsonEvents(res);
    const seen: string[] = [];
    for await (const { event } of events) {
      seen.push(event.type);
      if (seen.length === 3) break;
    }
    // 240 s would take seconds to synthesize; three lines came long before.
    expect(seen).toEqual(['title', 'audio_chunk', 'audio_chunk']);
    await res.body?.cancel().catch(() => {});
  });
});

const GOLDEN_HASH = 'blake3:92e942f68590e7d94320fab30f5bbd9f79b49186d44691a0210b404bb9889fcc';
