// Renders a stretch of a composed track as 16-bit little-endian mono PCM:
// pad chords, bass, a lead line in the score's timbre, and drums. Each
// sample depends only on its index, so stretches rendered apart join
// seamlessly and the same prompt gives the same bytes.

import type { Timbre } from './describe.ts';
import { type Bar, barFrames, composeBar, type Score } from './score.ts';
import { noise, noteHz, sine, triangle } from './tones.ts';

export interface Renderer {
  /** Writes frames [start, start + count) as PCM into `out` from byte `at`. */
  render(start: number, count: number, out: Uint8Array, at: number): void;
}

/** A sound of the bar: where it starts in the bar, how long it lasts, and its sample at `d` frames in. */
type Sound = [start: number, length: number, shape: (d: number, x: number, n: number) => number];

export function createRenderer(s: Score): Renderer {
  const sr = s.sampleRate;
  const bf = barFrames(s);
  const fadeIn = Math.round(0.02 * sr);
  const fadeOut = Math.min(2 * sr, Math.floor(s.frames / 4));
  let cached: { index: number; sounds: Sound[] } | undefined;
  let mix = new Float64Array(0);

  const soundsOf = (index: number): Sound[] => {
    if (cached?.index !== index) cached = { index, sounds: barSounds(s, composeBar(s, index), bf) };
    return cached.sounds;
  };

  return {
    render(start, count, out, at) {
      if (mix.length < count) mix = new Float64Array(count);
      mix.fill(0, 0, count);
      const end = start + count;
      for (let bar = Math.floor(start / bf); bar * bf < end; bar++) {
        const barStart = bar * bf;
        for (const [offset, length, shape] of soundsOf(bar)) {
          const from = Math.max(start, barStart + offset);
          const to = Math.min(end, barStart + offset + length);
          for (let n = from; n < to; n++) {
            const d = n - barStart - offset;
            mix[n - start] += shape(d, d / length, n);
          }
        }
      }
      const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
      for (let i = 0; i < count; i++) {
        const n = start + i;
        let v = 0.8 * mix[i];
        if (n < fadeIn) v *= n / fadeIn;
        if (n >= s.frames - fadeOut) v *= (s.frames - n) / fadeOut;
        // A soft clip: loud passages round off instead of wrapping around.
        v = Math.max(-1, Math.min(1, v));
        view.setInt16(at + 2 * i, Math.round((1.5 * v - 0.5 * v * v * v) * 32767), true);
      }
    },
  };
}

function barSounds(s: Score, bar: Bar, bf: number): Sound[] {
  const sr = s.sampleRate;
  const sounds: Sound[] = [];

  for (const hz of bar.chord.map(noteHz)) {
    const rise = 0.25 * sr;
    const fall = 0.1 * sr;
    sounds.push([
      0,
      bf,
      (d) => {
        const t = d / sr;
        return 0.09 * Math.min(1, d / rise) * Math.min(1, (bf - d) / fall) * (sine(hz * t) + 0.25 * sine(2 * hz * t));
      },
    ]);
  }
  for (const note of bar.melody) {
    const hz = noteHz(note.midi);
    const gain = 0.22 * note.velocity;
    const shape = lead(s.timbre, hz, s.seed);
    sounds.push([note.start, note.length, (d, x, n) => gain * shape(d / sr, x, n)]);
  }
  for (const note of bar.bass) {
    const hz = noteHz(note.midi);
    const gain = 0.3 * note.velocity;
    const rise = 0.005 * sr;
    sounds.push([
      note.start,
      note.length,
      (d, x) => {
        const t = d / sr;
        return gain * Math.min(1, d / rise) * (1 - x) * (1 - 0.5 * x) * (sine(hz * t) + 0.2 * sine(2 * hz * t));
      },
    ]);
  }
  for (const start of bar.kicks) {
    const length = Math.min(Math.round(0.3 * sr), bf - start);
    // The pitch falls from 155 to 45 Hz; the phase is that sweep's integral.
    const sweep = (110 * (length / sr)) / 3;
    sounds.push([
      start,
      length,
      (d, x) => {
        const y = 1 - x;
        return 0.5 * y * y * sine(45 * (d / sr) + sweep * (1 - y * y * y));
      },
    ]);
  }
  for (const start of bar.snares) {
    sounds.push([
      start,
      Math.min(Math.round(0.18 * sr), bf - start),
      (d, x, n) => {
        const y = (1 - x) * (1 - x);
        return 0.16 * y * (1 - x) * noise(n, s.seed) + 0.1 * y * y * sine(180 * (d / sr));
      },
    ]);
  }
  for (const start of bar.hats) {
    const gain = start % s.beatFrames === 0 ? 0.03 : 0.05;
    sounds.push([
      start,
      Math.min(Math.round(0.05 * sr), bf - start),
      (_d, x, n) => {
        const y = (1 - x) * (1 - x);
        return gain * y * y * noise(n, s.seed ^ 0x5bd1e995);
      },
    ]);
  }
  return sounds;
}

/** The lead voice's sample at `t` seconds and fraction `x` into a note of `hz`. */
function lead(timbre: Timbre, hz: number, seed: number): (t: number, x: number, n: number) => number {
  switch (timbre) {
    case 'keys':
      return (t, x) => Math.min(1, t / 0.008) * (1 - x) * (1 - x) * (sine(hz * t) + 0.35 * sine(2 * hz * t) + 0.1 * sine(3 * hz * t));
    case 'bell':
      return (t, x) => Math.min(1, t / 0.004) * (1 - x) * (1 - x) * (sine(hz * t) + 0.4 * (1 - x) * sine(3.01 * hz * t));
    case 'pluck':
      return (t, x) => Math.min(1, t / 0.003) * (1 - x) * (1 - x) * (1 - x) * (0.8 * triangle(hz * t) + 0.3 * sine(2 * hz * t));
    case 'flute':
      return (t, x, n) => Math.min(1, t / 0.05) * Math.min(1, (1 - x) * 8) * (sine(hz * t) + 0.12 * triangle(2 * hz * t) + 0.03 * noise(n, seed));
    case 'synth':
      return (t, x) => Math.min(1, t / 0.01) * (1 - 0.6 * x) * Math.min(1, (1 - x) * 10) * 0.6 * (triangle(hz * t) + 0.5 * triangle(1.005 * hz * t));
  }
}
