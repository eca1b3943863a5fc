// Reads and checks the multipart form of POST /proxy/musicgen/t2m/generate.
// `prompt`: required text, 1 to 2000 characters (Unicode code points) after
// trimming, UTF-8, no control characters but tab and line breaks.
// `duration`: optional seconds, a decimal number from 1 to 300, default 30.
// Other parts are skipped. A body that is not multipart, cannot be parsed or
// exceeds 64 KiB is a 400; a field out of its bounds a 422.
import { concatBytes } from '../../bytes.ts';
import { MultipartError, MultipartLimitError, multipartBoundary, parseMultipart, type MultipartPart } from '../../multipart.ts';
import { MusicError } from './errors.ts';
import { DEFAULT_DURATION, durationProblem, MAX_PROMPT_CHARS, promptProblem } from './limits.ts';
import type { MusicRequest } from './provider.ts';

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
  // Four bytes is the most a code point takes: more bytes than that is surely too long.
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

export async function readMusicForm(request: Request): Promise<MusicRequest> {
  const boundary = multipartBoundary(request.headers.get('content-type'));
  if (!boundary) throw new MusicError('bad_request', 'The body must be multipart/form-data with a boundary.');
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_FORM_BYTES) throw tooLarge();
  if (!request.body) throw new MusicError('bad_request', 'The request has no body.');
  let prompt: string | undefined;
  let duration: number | undefined;
  try {
    for await (const part of parseMultipart(request.body, boundary, { maxBodyBytes: MAX_FORM_BYTES, maxParts: 32 })) {
      if (part.name === 'prompt') {
        if (prompt !== undefined) throw invalid('prompt: given more than once');
        prompt = checkPrompt(await readCapped(part, 4 * MAX_PROMPT_CHARS + 64));
      } else if (part.name === 'duration') {
        if (duration !== undefined) throw invalid('duration: given more than once');
        duration = checkDuration(await readCapped(part, 32));
      }
    }
  } catch (err) {
    if (err instanceof MultipartLimitError) throw tooLarge();
    if (err instanceof MultipartError) throw new MusicError('bad_request', `The multipart body could not be parsed: ${err.message}.`);
    throw err;
  }
  if (prompt === undefined) throw invalid('prompt: is required (a form field named "prompt")');
  return { prompt, duration: duration ?? DEFAULT_DURATION };
}

const tooLarge = () => new MusicError('bad_request', `The form is larger than ${MAX_FORM_BYTES} bytes.`);
