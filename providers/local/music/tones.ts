// Pitches and waveforms from arithmetic that every runtime rounds alike
// (IEEE +, *, /, sqrt and literals; no Math.sin/pow/exp, whose last bits vary
// between engines), so a prompt gives the same bytes everywhere.

/** Equal-tempered frequencies of the octave from C4, as literals. */
const OCTAVE4 = [
  261.6255653005986, 277.1826309768721, 293.6647679174076, 311.1269837220809, 329.6275569128699, 349.2282314330039, 369.9944227116344,
  391.99543598174927, 415.3046975799451, 440, 466.1637615180899, 493.8833012561241,
];

/** Hz of a MIDI note (60 = C4). */
export function noteHz(midi: number): number {
  const octave = Math.floor(midi / 12) - 5;
  let hz = OCTAVE4[midi - 12 * Math.floor(midi / 12)];
  for (let i = 0; i < octave; i++) hz *= 2;
  for (let i = 0; i > octave; i--) hz /= 2;
  return hz;
}

const TABLE_SIZE = 4096;

/** One period of a sine, each entry from its Taylor series (exact enough past 1e-12). */
const SINE = (() => {
  const quarter = TABLE_SIZE / 4;
  const t = new Float64Array(TABLE_SIZE + 1);
  for (let i = 0; i <= quarter; i++) {
    const x = (i / quarter) * (Math.PI / 2);
    let term = x;
    let sum = x;
    for (let k = 1; k < 12; k++) {
      term = (-term * x * x) / (2 * k * (2 * k + 1));
      sum += term;
    }
    t[i] = sum;
    t[TABLE_SIZE / 2 - i] = sum;
    t[TABLE_SIZE / 2 + i] = -sum;
    t[TABLE_SIZE - i] = -sum;
  }
  return t;
})();

/** sin(2π·phase) for a phase in cycles (any real), linearly interpolated. */
export function sine(phase: number): number {
  const p = (phase - Math.floor(phase)) * TABLE_SIZE;
  const i = Math.floor(p);
  const f = p - i;
  return SINE[i] + (SINE[i + 1] - SINE[i]) * f;
}

/** A triangle in [-1, 1] for a phase in cycles. */
export function triangle(phase: number): number {
  const p = phase - Math.floor(phase);
  return p < 0.5 ? 4 * p - 1 : 3 - 4 * p;
}

/** White noise in [-1, 1) as a pure function of an integer (a sample index). */
export function noise(n: number, seed: number): number {
  let x = Math.imul(n ^ seed, 0x9e3779b1);
  x ^= x >>> 15;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) / 2147483648 - 1;
}
