// The composition of a track: key, tempo, a four-chord progression and, bar
// by bar, the melody, bass and drum hits. Every bar is a pure function of the
// seed and its index, so the renderer can make any stretch of the track
// without keeping the rest (memory stays one bar, whatever the duration).
import { type PromptReading, readPrompt, type Timbre } from './describe.ts';
import { pick, promptSeed, seededRandom } from './seed.ts';

const MAJOR = [0, 2, 4, 5, 7, 9, 11];
const MINOR = [0, 2, 3, 5, 7, 8, 10];
/** Scale degrees (0-based) of the chords, one per bar. */
const MAJOR_PROGRESSIONS = [
  [0, 4, 5, 3],
  [0, 5, 3, 4],
  [5, 3, 0, 4],
  [0, 3, 4, 3],
  [0, 3, 5, 4],
  [1, 4, 0, 0],
];
const MINOR_PROGRESSIONS = [
  [0, 5, 2, 6],
  [0, 3, 4, 0],
  [0, 6, 5, 6],
  [0, 5, 3, 4],
  [0, 3, 6, 2],
];
const TIMBRES: Timbre[] = ['keys', 'bell', 'pluck', 'flute', 'synth'];

export interface Score {
  sampleRate: number;
  /** Sample frames of the whole track. */
  frames: number;
  seed: number;
  reading: PromptReading;
  /** Pitch class of the key's tonic. */
  root: number;
  minor: boolean;
  bpm: number;
  /** Whole samples per beat, so bars fall on exact samples. */
  beatFrames: number;
  progression: number[];
  /** 0 quiet (no drums), 1 kick and hats, 2 full kit. */
  energy: number;
  timbre: Timbre;
}

export interface Note {
  /** Offset in the bar, frames. */
  start: number;
  length: number;
  midi: number;
  velocity: number;
}

export interface Bar {
  /** MIDI notes of the chord (pad voicing, around C4). */
  chord: number[];
  melody: Note[];
  bass: Note[];
  kicks: number[];
  snares: number[];
  hats: number[];
}

export function compose(prompt: string, durationSeconds: number, sampleRate: number): Score {
  const seed = promptSeed(prompt);
  const random = seededRandom(seed);
  const reading = readPrompt(prompt);
  const minor = reading.minor ?? random() < 0.45;
  const root = reading.root ?? Math.floor(random() * 12);
  const drawnBpm = 72 + Math.floor(random() * 48);
  const bpm = Math.min(160, Math.max(60, (reading.bpm ?? drawnBpm) + reading.tempoShift));
  return {
    sampleRate,
    frames: Math.round(durationSeconds * sampleRate),
    seed,
    reading,
    root,
    minor,
    bpm,
    beatFrames: Math.round((sampleRate * 60) / bpm),
    progression: pick(random, minor ? MINOR_PROGRESSIONS : MAJOR_PROGRESSIONS),
    energy: reading.energy ?? Math.floor(random() * 3),
    timbre: reading.timbre ?? pick(random, TIMBRES),
  };
}

export const barFrames = (s: Score) => s.beatFrames * 4;

/** MIDI note of a scale degree (any integer) above the tonic in octave `octave` (4 = from C4). */
export function degreeMidi(s: Score, degree: number, octave: number): number {
  const scale = s.minor ? MINOR : MAJOR;
  const wrapped = ((degree % 7) + 7) % 7;
  return 12 * (octave + 1) + s.root + 12 * Math.floor(degree / 7) + scale[wrapped];
}

/** "i–VI–III–VII": the progression in Roman numerals, cased by chord quality. */
export function romanProgression(s: Score): string {
  const numerals = ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII'];
  return s.progression
    .map((d) => {
      const third = degreeMidi(s, d + 2, 4) - degreeMidi(s, d, 4);
      const fifth = degreeMidi(s, d + 4, 4) - degreeMidi(s, d, 4);
      const n = numerals[d];
      return third === 4 ? n : fifth === 6 ? `${n.toLowerCase()}°` : n.toLowerCase();
    })
    .join('–');
}

export function composeBar(s: Score, index: number): Bar {
  const chordDegree = s.progression[index % s.progression.length];
  const beat = s.beatFrames;
  const eighth = Math.floor(beat / 2);
  const chord = [0, 2, 4].map((step) => degreeMidi(s, chordDegree + step, 3));

  // Phrases: bars 0-3 and 4-7 share a motif, 8-15 another, then it comes back.
  const motif = (index % 4) + 4 * (Math.floor(index / 8) % 2);
  const random = seededRandom((s.seed ^ Math.imul(motif + 1, 0x9e3779b1)) >>> 0);
  const melody: Note[] = [];
  let degree = chordDegree + pick(random, [0, 2, 4, 7]);
  for (let slot = 0; slot < 8; slot++) {
    const strong = slot % 2 === 0;
    if (slot > 0 && random() < (strong ? 0.15 : 0.3)) continue;
    if (strong) {
      // Strong beats land on a chord tone near the line.
      const tones = [0, 2, 4, 7, 9, 11].map((t) => chordDegree + t);
      degree = tones.reduce((best, t) => (Math.abs(t - degree) < Math.abs(best - degree) ? t : best), tones[0]);
    } else {
      degree += pick(random, [-2, -1, -1, 1, 1, 2]);
    }
    degree = Math.max(chordDegree - 3, Math.min(chordDegree + 11, degree));
    const held = slot < 7 && random() < 0.3 ? 2 : 1;
    melody.push({ start: slot * eighth, length: eighth * held, midi: degreeMidi(s, degree, 4), velocity: strong ? 1 : 0.8 });
    if (held === 2) slot++;
  }

  const bassRoot = degreeMidi(s, chordDegree, 2);
  const bass: Note[] = [0, 1, 2, 3].map((b) => ({
    start: b * beat,
    length: beat,
    midi: b === 2 ? degreeMidi(s, chordDegree + 4, 2) : bassRoot,
    velocity: b === 0 ? 1 : 0.75,
  }));

  const drums = s.energy > 0 && index > 0;
  return {
    chord,
    melody,
    bass,
    kicks: drums ? (s.energy === 2 ? [0, 2 * beat, 3 * beat + eighth] : [0, 2 * beat]) : [],
    snares: drums && s.energy === 2 ? [beat, 3 * beat] : [],
    hats: drums ? Array.from({ length: 8 }, (_, i) => i * eighth) : [],
  };
}
