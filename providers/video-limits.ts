// The bounds of a multi-frame video request, in one place: the validation
// enforces them, the local renderer and the README quote them.
export const MIN_FRAMES = 2;
export const MAX_FRAMES = 9;
/** Seconds of video per frame setting; fractions allowed. */
export const MIN_DURATION = 1;
export const MAX_DURATION = 10;
export const DEFAULT_DURATION = 5;
/** Characters are Unicode code points (an emoji is one), not UTF-16 units. */
export const MAX_PROMPT_CHARS = 2000;
export const MAX_PAYLOAD_CHARS = 1_048_576;
/** A key frame or start image: base64 decoded, or downloaded from its URL. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const MAX_URL_CHARS = 2048;
/** The whole JSON body (buffered to parse): large key frames beyond it go by URL. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Whether `s` has more than `max` characters, counted in code points (an
 * astral character such as 🎬 is one, though two UTF-16 units; so is a lone
 * surrogate). Only a string of more than `max` units is walked, and one of
 * more than twice that is too long whatever it holds.
 */
export function overMaxChars(s: string, max: number): boolean {
  if (s.length <= max) return false;
  if (s.length > 2 * max) return true;
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return n > max;
}
