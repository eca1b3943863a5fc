// The OpenAPI document of the music surface, served at
// /proxy/musicgen/openapi.json and built from its route table. The form is
// read by hand (form.ts, no valibot schema), so its schema is written here
// from the same bounds (providers/music-limits.ts); errors are the surface's
// `{detail: {code, message}}`.
import { DEFAULT_DURATION, MAX_DURATION, MAX_PROMPT_CHARS, MIN_DURATION } from '../../../providers/music-limits.ts';
import { type Json, jsonRef, openApiDocument, PROXY_AUTH } from '../../http/openapi.ts';
import { MUSIC_ERROR_STATUS } from './errors.ts';
import { MAX_FORM_BYTES } from './form.ts';

const error = (description: string): Json => ({ description, content: jsonRef('MusicError') });

const event = (type: string, description: string, properties: Record<string, Json>, required: string[]): Json => ({
  type: 'object',
  description,
  required: ['type', ...required],
  properties: { type: { type: 'string', enum: [type] }, ...properties },
});
const int = { type: 'integer', minimum: 0 };

const OPERATIONS: Record<string, Json> = {
  'POST /proxy/musicgen/t2m/generate': {
    operationId: 'generateMusic',
    summary: 'Generate music from text, streamed as NDJSON events',
    description:
      'One JSON object per line: a `title`, `audio_chunk`s (base64 slices of one WAV file, in `index` order), then `complete`; a failure after the first line ends the stream with an `error` event (the status is already sent). Clients ignore event types they do not know. Credits are charged before the first byte (one per started 10 seconds; header X-Credits-Charged).',
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['prompt'],
            properties: {
              prompt: {
                type: 'string',
                minLength: 1,
                maxLength: MAX_PROMPT_CHARS,
                description: `Text describing the music: 1 to ${MAX_PROMPT_CHARS} characters (code points) after trimming, no control characters but tabs and line breaks.`,
              },
              duration: {
                type: 'number',
                minimum: MIN_DURATION,
                maximum: MAX_DURATION,
                default: DEFAULT_DURATION,
                description: 'Seconds of audio, a decimal number (e.g. 30 or 12.5).',
              },
            },
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'The event stream.',
        headers: { 'X-Credits-Charged': { schema: { type: 'integer' } } },
        content: { 'application/x-ndjson': { schema: { $ref: '#/components/schemas/MusicEvent' } } },
      },
      '400': error(`bad_request: not multipart/form-data, unparsable, or larger than ${MAX_FORM_BYTES} bytes`),
      '401': error('unauthorized'),
      '402': error('insufficient_credits'),
      '422': error(
        'validation_error: a field out of its bounds; the message names it; or deployment_stopped: an operator must start the deployment again',
      ),
      '429': error(
        'rate_limited (with Retry-After): the account runs as many generations as it may at once, or the generator says so; or deployment_not_ready (with Retry-After): the deployment is not ready yet',
      ),
      '502': error('upstream_error: the generator failed before the first event'),
    },
  },
  'GET /proxy/musicgen/openapi.json': {
    operationId: 'getOpenApi',
    summary: 'This document',
    security: [],
    responses: { '200': { description: 'OpenAPI 3.0 document.' } },
  },
};

const SCHEMAS: Record<string, Json> = {
  MusicError: {
    type: 'object',
    required: ['detail'],
    properties: {
      detail: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string', enum: Object.keys(MUSIC_ERROR_STATUS) }, message: { type: 'string' } },
      },
    },
  },
  MusicEvent: {
    description: 'One line of the stream; other types may appear.',
    oneOf: ['MusicTitle', 'MusicAudioChunk', 'MusicComplete', 'MusicStreamError'].map((name) => ({ $ref: `#/components/schemas/${name}` })),
  },
  MusicTitle: event(
    'title',
    'What the track is, first.',
    {
      copy_index: int,
      prompt_index: int,
      stream_index: int,
      title: { type: 'string' },
      display_tags: { type: 'array', items: { type: 'string' } },
      summary: { type: 'string' },
    },
    ['copy_index', 'prompt_index', 'stream_index', 'title', 'display_tags'],
  ),
  MusicAudioChunk: event(
    'audio_chunk',
    'A slice of the WAV file; the first starts with its RIFF header.',
    {
      copy_index: int,
      stream_index: int,
      index: int,
      content_type: { type: 'string', enum: ['audio/wav'] },
      byte_offset: int,
      data: { type: 'string', format: 'byte', description: 'Base64 of the bytes' },
    },
    ['copy_index', 'stream_index', 'index', 'content_type', 'byte_offset', 'data'],
  ),
  MusicComplete: event(
    'complete',
    'The whole file is out.',
    {
      copy_index: int,
      stream_index: int,
      content_type: { type: 'string', enum: ['audio/wav'] },
      duration: { type: 'number', description: 'Seconds' },
      sample_rate: { type: 'integer' },
      channels: { type: 'integer' },
      bits_per_sample: { type: 'integer' },
      byte_size: { type: 'integer', description: 'Of the whole WAV file' },
      chunks: { type: 'integer' },
      hash: { type: 'string', description: '`blake3:<hex>` of the whole WAV file' },
    },
    ['copy_index', 'stream_index', 'content_type', 'duration', 'sample_rate', 'channels', 'bits_per_sample', 'byte_size', 'chunks', 'hash'],
  ),
  MusicStreamError: event(
    'error',
    'Terminal: the generation failed after the stream began.',
    { code: { type: 'string' }, message: { type: 'string' } },
    ['code', 'message'],
  ),
};

/** The document of the music surface's route table (every route of it, or this throws). */
export function musicOpenApi(routes: ReadonlyArray<readonly [method: string, path: string, ...rest: unknown[]]>): Json {
  return openApiDocument(
    {
      title: 'graphrun music generation',
      description: 'Text-to-music generation streamed as NDJSON. Every error is `{detail: {code, message}}`, routing answers (404, 405) included.',
      ...PROXY_AUTH,
      schemas: SCHEMAS,
      operation: (method, path) => OPERATIONS[`${method} ${path}`],
    },
    routes,
  );
}
