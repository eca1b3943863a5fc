// The seed of a track: FNV-1a over the prompt's UTF-8 bytes, and a small
// seeded generator (mulberry32), so the same prompt always composes alike.
export function promptSeed(prompt: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(prompt)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export type Random = () => number;

/** Uniform in [0, 1) from a 32-bit seed. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)];
