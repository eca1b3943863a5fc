// Reads and checks the multipart form of POST /proxy/musicgen/t2m/generate.
// `prompt`: required text, 1 to 2000 characters (Unicode code points) after
// trimming, UTF-8, no control characters but tab and line breaks.
// `duration`: optional seconds, a decimal number from 1 to 300, default 30.
// Other parts are skipped. A body that is not multipart, cannot be parsed or
// exceeds 64 KiB (declared or counted as it streams) is a 400; a field out of
// its bounds a 422.
import { concatBytes } from '../../../lib/bytes.ts';
import type { MusicRequest } from '../../../providers/music.ts';
import { DEFAULT_DURATION, durationProblem, MAX_PROMPT_CHARS, promptProblem } from '../../../providers/music-limits.ts';
import { MultipartError, MultipartLimitError, type MultipartPart, multipartBoundary, parseMultipart } from '../../http/multipart.ts';
import { MusicError } from './errors.ts';

export const MAX_FORM_BYTES = 64 * 1024;

const invalid = (message: string) => new MusicError('validation_error', message);

/** The part's bytes, or null past `max` (the rest is left to the parser to drain). */
async function readCapped(part: MultipartPart, max: number): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of part.body) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk.slice());
  }
  return concatBytes(chunks);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function checkPrompt(bytes: Uint8Array | null): string {
  // More bytes than FIELD_BYTES allows is surely too long.
  if (bytes === null) throw invalid(`prompt: must be at most ${MAX_PROMPT_CHARS} characters`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid('prompt: must be UTF-8 text');
  }
  const prompt = text.trim();
  const problem = promptProblem(prompt);
  if (problem) throw invalid(problem);
  return prompt;
}

function checkDuration(bytes: Uint8Array | null): number {
  const text = bytes === null ? null : new TextDecoder().decode(bytes).trim();
  if (text === '') return DEFAULT_DURATION;
  if (text === null || !/^\d+(\.\d+)?$/.test(text)) throw invalid('duration: must be a number of seconds, e.g. 30 or 12.5');
  const seconds = Number(text);
  const problem = durationProblem(seconds);
  if (problem) throw invalid(problem);
  return seconds;
}

type Field = 'prompt' | 'duration';
/** Bytes read of each field; four bytes is the most a code point of the prompt takes. */
const FIELD_BYTES: Record<Field, number> = { prompt: 4 * MAX_PROMPT_CHARS + 64, duration: 32 };
const isField = (name: string): name is Field => Object.hasOwn(FIELD_BYTES, name);

export async function readMusicForm(request: Request): Promise<MusicRequest> {
  const boundary = multipartBoundary(request.headers.get('content-type'));
  if (!boundary) throw new MusicError('bad_request', 'The body must be multipart/form-data with a boundary.');
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_FORM_BYTES) throw tooLarge();
  if (!request.body) throw new MusicError('bad_request', 'The request has no body.');
  const given: Partial<Record<Field, { bytes: Uint8Array | null; times: number }>> = {};
  try {
    // Every part is read before any field is judged: a form over the size
    // limit is then a 400 whether or not it declared its length, whatever
    // its fields look like. The parser drains what is left unread.
    for await (const part of parseMultipart(request.body, boundary, { maxBodyBytes: MAX_FORM_BYTES, maxParts: 32 })) {
      if (!isField(part.name)) continue;
      const seen = given[part.name];
      if (seen) seen.times++;
      else given[part.name] = { bytes: await readCapped(part, FIELD_BYTES[part.name]), times: 1 };
    }
  } catch (err) {
    if (err instanceof MultipartLimitError) throw tooLarge();
    if (err instanceof MultipartError) throw new MusicError('bad_request', `The multipart body could not be parsed: ${err.message}.`);
    throw err;
  }
  const { prompt, duration } = given;
  if (!prompt) throw invalid('prompt: is required (a form field named "prompt")');
  if (prompt.times > 1) throw invalid('prompt: given more than once');
  const text = checkPrompt(prompt.bytes);
  if (duration && duration.times > 1) throw invalid('duration: given more than once');
  return { prompt: text, duration: duration ? checkDuration(duration.bytes) : DEFAULT_DURATION };
}

const tooLarge = () => new MusicError('bad_request', `The form is larger than ${MAX_FORM_BYTES} bytes.`);
