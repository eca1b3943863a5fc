// The multiframe request, validated exactly (valibot): every problem of the
// body is reported at once, one detail per field, as `<field>: <reason>`.
// Unknown fields are refused too (all of them, which valibot's strictObject
// stops at the first of), so a misspelt option is never silently ignored.
import * as v from 'valibot';
import { imageRefProblem } from '../../../lib/image/ref.ts';
import { isRecord } from '../../../lib/is-record.ts';
import { VIDEO_MODELS, VIDEO_RESOLUTIONS, type VideoRequest } from '../../../providers/video.ts';
import * as L from '../../../providers/video-limits.ts';

const UNKNOWN_FIELD = 'is not a field of this request';
// Base64 of the largest image, plus room for a data: prefix and line breaks.
const MAX_IMAGE_CHARS = Math.ceil(L.MAX_IMAGE_BYTES / 3) * 4 + 1024;

const imageRef = v.pipe(
  v.string('must be a string'),
  v.maxLength(MAX_IMAGE_CHARS, `must be at most ${MAX_IMAGE_CHARS} characters`),
  v.check(
    (s) => imageRefProblem(s, L.MAX_IMAGE_BYTES) === null,
    (issue) => imageRefProblem(String(issue.input), L.MAX_IMAGE_BYTES) ?? 'is not a valid image',
  ),
);

/** A string of at most `max` characters (code points, as the README counts them; valibot's maxLength counts UTF-16 units). */
const maxChars = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.check((s: string) => !L.overMaxChars(s, max), `must be at most ${max} characters`),
  );

const httpUrl = v.pipe(
  v.string('must be a string'),
  v.maxLength(L.MAX_URL_CHARS, `must be at most ${L.MAX_URL_CHARS} characters`),
  v.check((s) => /^https?:\/\//i.test(s) && URL.canParse(s), 'must be an http or https URL'),
);

const frameSetting = v.object(
  {
    key_image: imageRef,
    duration: v.optional(
      v.pipe(
        v.number('must be a number of seconds'),
        v.minValue(L.MIN_DURATION, `must be at least ${L.MIN_DURATION}`),
        v.maxValue(L.MAX_DURATION, `must be at most ${L.MAX_DURATION}`),
      ),
      L.DEFAULT_DURATION,
    ),
    prompt: v.optional(maxChars(L.MAX_PROMPT_CHARS), ''),
  },
  'must be an object',
);

export const MultiframeBody = v.object(
  {
    image_settings: v.pipe(
      v.array(frameSetting, 'must be an array of frame settings'),
      v.minLength(L.MIN_FRAMES, `must have at least ${L.MIN_FRAMES} entries`),
      v.maxLength(L.MAX_FRAMES, `must have at most ${L.MAX_FRAMES} entries`),
    ),
    model: v.picklist(VIDEO_MODELS, `must be one of ${VIDEO_MODELS.join(', ')}`),
    resolution: v.optional(v.picklist(VIDEO_RESOLUTIONS, `must be one of ${VIDEO_RESOLUTIONS.join(', ')}`), '720p'),
    payload: v.optional(maxChars(L.MAX_PAYLOAD_CHARS), ''),
    start_image: v.optional(imageRef),
    callback_url: v.optional(httpUrl),
  },
  'must be a JSON object',
);

/** Every key of the body and of its frame settings that the schema does not know. */
function unknownFields(body: Record<string, unknown>): string[] {
  const out = Object.keys(body).filter((k) => !Object.hasOwn(MultiframeBody.entries, k));
  if (Array.isArray(body.image_settings)) {
    body.image_settings.forEach((item, i) => {
      if (isRecord(item)) for (const k of Object.keys(item)) if (!Object.hasOwn(frameSetting.entries, k)) out.push(`image_settings[${i}].${k}`);
    });
  }
  return out;
}

export interface ParsedMultiframe {
  request: VideoRequest;
  callback_url: string | null;
}

/** `image_settings[2].duration` from a valibot issue path. */
function fieldOf(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = item.key as unknown;
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out || '(body)';
}

/** The request, or every problem of the body as details (the first per field). */
export function parseMultiframe(body: unknown): { ok: true; value: ParsedMultiframe } | { ok: false; details: string[] } {
  if (!isRecord(body)) return { ok: false, details: ['(body): must be a JSON object'] };
  const result = v.safeParse(MultiframeBody, body);
  const byField = new Map<string, string>();
  for (const issue of result.issues ?? []) {
    const field = fieldOf(issue);
    // JSON has no undefined: an undefined input is a missing key.
    const reason = issue.input === undefined ? 'is required' : issue.message;
    if (!byField.has(field)) byField.set(field, reason);
  }
  for (const field of unknownFields(body)) byField.set(field, UNKNOWN_FIELD);
  if (!result.success || byField.size > 0) return { ok: false, details: [...byField].map(([field, reason]) => `${field}: ${reason}`) };
  const { callback_url, start_image, ...rest } = result.output;
  return { ok: true, value: { request: { ...rest, start_image: start_image ?? '' }, callback_url: callback_url ?? null } };
}
