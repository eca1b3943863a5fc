// The bounds of a multi-frame video request, in one place: the validation
// enforces them, the local renderer and the README quote them.
export const MIN_FRAMES = 2;
export const MAX_FRAMES = 9;
/** Seconds of video per frame setting; fractions allowed. */
export const MIN_DURATION = 1;
export const MAX_DURATION = 10;
export const DEFAULT_DURATION = 5;
export const MAX_PROMPT_CHARS = 2000;
export const MAX_PAYLOAD_CHARS = 1_048_576;
/** A key frame or start image: base64 decoded, or downloaded from its URL. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const MAX_URL_CHARS = 2048;
/** The whole JSON body (buffered to parse): large key frames beyond it go by URL. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
