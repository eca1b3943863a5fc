// What a prompt asks for, read from its words: mood, genre and instrument
// words (the display tags), tempo and key hints. The track's title and
// summary are written from them and from what the composer chose.

/** Mood words: the mode they lean to and how they move the tempo and energy. */
const MOODS: Record<string, { minor?: boolean; tempo: number; energy: number }> = {
  calm: { tempo: -20, energy: 0 },
  relaxing: { tempo: -20, energy: 0 },
  peaceful: { tempo: -20, energy: 0 },
  chill: { tempo: -10, energy: 0 },
  mellow: { tempo: -15, energy: 0 },
  dreamy: { tempo: -15, energy: 0 },
  gentle: { tempo: -15, energy: 0 },
  soft: { tempo: -10, energy: 0 },
  sad: { minor: true, tempo: -20, energy: 0 },
  melancholic: { minor: true, tempo: -20, energy: 0 },
  melancholy: { minor: true, tempo: -20, energy: 0 },
  dark: { minor: true, tempo: -5, energy: 1 },
  mysterious: { minor: true, tempo: -10, energy: 1 },
  nostalgic: { tempo: -10, energy: 0 },
  romantic: { tempo: -10, energy: 0 },
  happy: { minor: false, tempo: 10, energy: 1 },
  joyful: { minor: false, tempo: 10, energy: 1 },
  cheerful: { minor: false, tempo: 10, energy: 1 },
  uplifting: { minor: false, tempo: 5, energy: 1 },
  hopeful: { minor: false, tempo: 0, energy: 1 },
  upbeat: { minor: false, tempo: 20, energy: 2 },
  energetic: { tempo: 25, energy: 2 },
  epic: { tempo: 10, energy: 2 },
  intense: { minor: true, tempo: 20, energy: 2 },
  angry: { minor: true, tempo: 30, energy: 2 },
  playful: { minor: false, tempo: 10, energy: 1 },
};

/** Genre words and the tempo they sit at. */
const GENRES: Record<string, { bpm: number; energy: number }> = {
  lofi: { bpm: 78, energy: 1 },
  ambient: { bpm: 70, energy: 0 },
  jazz: { bpm: 110, energy: 1 },
  blues: { bpm: 84, energy: 1 },
  rock: { bpm: 124, energy: 2 },
  pop: { bpm: 112, energy: 2 },
  electronic: { bpm: 124, energy: 2 },
  edm: { bpm: 128, energy: 2 },
  techno: { bpm: 130, energy: 2 },
  house: { bpm: 124, energy: 2 },
  synthwave: { bpm: 100, energy: 2 },
  disco: { bpm: 118, energy: 2 },
  funk: { bpm: 104, energy: 2 },
  hiphop: { bpm: 90, energy: 1 },
  trap: { bpm: 140, energy: 2 },
  classical: { bpm: 88, energy: 0 },
  orchestral: { bpm: 92, energy: 1 },
  cinematic: { bpm: 90, energy: 1 },
  folk: { bpm: 96, energy: 1 },
  country: { bpm: 104, energy: 1 },
  reggae: { bpm: 80, energy: 1 },
  soul: { bpm: 92, energy: 1 },
  waltz: { bpm: 90, energy: 0 },
  lullaby: { bpm: 66, energy: 0 },
};

/** Instrument words and the lead voice they get. */
const INSTRUMENTS: Record<string, Timbre> = {
  piano: 'keys',
  keys: 'keys',
  rhodes: 'keys',
  bells: 'bell',
  bell: 'bell',
  celesta: 'bell',
  music_box: 'bell',
  guitar: 'pluck',
  harp: 'pluck',
  ukulele: 'pluck',
  flute: 'flute',
  whistle: 'flute',
  violin: 'flute',
  strings: 'flute',
  cello: 'flute',
  synth: 'synth',
  synthesizer: 'synth',
  saxophone: 'synth',
  sax: 'synth',
  organ: 'synth',
  trumpet: 'synth',
};

export type Timbre = 'keys' | 'bell' | 'pluck' | 'flute' | 'synth';

/** Spellings folded into the vocabulary's words. */
const ALIASES: Record<string, string> = { 'lo-fi': 'lofi', 'hip-hop': 'hiphop', 'hip hop': 'hiphop', 'music box': 'music_box' };

export const KEY_NAMES = ['C', 'C#', 'D', 'Eb', 'E', 'F', 'F#', 'G', 'Ab', 'A', 'Bb', 'B'];

export interface PromptReading {
  moods: string[];
  genres: string[];
  instruments: string[];
  /** Lean to a mode: true = minor, false = major, undefined = the seed decides. */
  minor: boolean | undefined;
  /** A tempo the prompt names ("92 bpm"), or the genre's, or undefined. */
  bpm: number | undefined;
  tempoShift: number;
  energy: number | undefined;
  /** A key the prompt names ("in D minor"): pitch class 0-11. */
  root: number | undefined;
  timbre: Timbre | undefined;
}

export function readPrompt(prompt: string): PromptReading {
  let text = prompt.toLowerCase();
  for (const [from, to] of Object.entries(ALIASES)) text = text.split(from).join(to);
  const words = text.split(/[^\p{L}\p{N}_#]+/u).filter(Boolean);
  const found = (vocab: Record<string, unknown>) => [...new Set(words.filter((w) => Object.hasOwn(vocab, w)))];
  const moods = found(MOODS);
  const genres = found(GENRES);
  const instruments = found(INSTRUMENTS);

  let minor: boolean | undefined;
  let tempoShift = 0;
  let energy: number | undefined;
  for (const m of moods) {
    minor ??= MOODS[m].minor;
    tempoShift += MOODS[m].tempo;
    energy = Math.max(energy ?? 0, MOODS[m].energy);
  }
  if (words.includes('slow')) tempoShift -= 20;
  if (words.includes('fast')) tempoShift += 25;
  let bpm = genres.length > 0 ? GENRES[genres[0]].bpm : undefined;
  if (genres.length > 0) energy ??= GENRES[genres[0]].energy;
  const named = /(\d{2,3})\s*bpm\b/.exec(text);
  if (named) {
    bpm = Number(named[1]);
    tempoShift = 0;
  }

  let root: number | undefined;
  const key = /\b(?:in\s+)?([a-g])(#|b|\s+sharp|\s+flat)?\s+(major|minor)\b/.exec(text);
  if (key) {
    const natural = { c: 0, d: 2, e: 4, f: 5, g: 7, a: 9, b: 11 }[key[1] as 'c'];
    const accidental = key[2]?.trim();
    root = (natural + (accidental === '#' || accidental === 'sharp' ? 1 : accidental === 'b' || accidental === 'flat' ? 11 : 0)) % 12;
    minor = key[3] === 'minor';
  }
  return {
    moods,
    genres,
    instruments,
    minor,
    bpm,
    tempoShift,
    energy,
    root,
    timbre: instruments.length > 0 ? INSTRUMENTS[instruments[0]] : undefined,
  };
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const shown = (word: string) =>
  word
    .replace(/_/g, ' ')
    .replace(/^lofi$/, 'lo-fi')
    .replace(/^hiphop$/, 'hip-hop');

/** Up to 6 tags: the prompt's mood, genre and instrument words, or "instrumental" when it has none. */
export function displayTags(r: PromptReading): string[] {
  const tags = [...r.genres, ...r.moods, ...r.instruments].map(shown).slice(0, 6);
  return tags.length > 0 ? tags : ['instrumental'];
}

/** "Calm lo-fi piano in A minor": the first mood, genre and instrument words, and the key. */
export function trackTitle(r: PromptReading, root: number, minor: boolean): string {
  const words = [r.moods[0], r.genres[0], r.instruments[0]].filter((w): w is string => w !== undefined).map(shown);
  const head = words.length > 0 ? words.join(' ') : 'instrumental piece';
  return `${capitalize(head)} in ${KEY_NAMES[root]} ${minor ? 'minor' : 'major'}`;
}
