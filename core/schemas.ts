// Request schemas (valibot), defined once: handlers validate with them, and
// their issues become 422 `invalid_request` envelopes naming the field.
import * as v from 'valibot';
import { ApiError } from './errors.ts';
import { HASH_PATTERN } from './hash.ts';

export const MIN_EXPIRES_IN = 60;
export const MAX_EXPIRES_IN = 604800;

const mediaType = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(255, 'must be at most 255 characters'),
  // Parameters are limited to visible ASCII: the value is served back as a header.
  v.regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+([ \t]*;[\x20-\x7e\t]*)?$/, 'must be a media type such as image/png'),
);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Relative, forward-slash paths only: no `..`, no absolute or drive paths, no control characters. */
export const filePath = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(1024, 'must be at most 1024 characters'),
  v.check((p) => !/[\u0000-\u001f\\]/.test(p), 'must not contain control characters or backslashes'),
  v.check((p) => !LONE_SURROGATE.test(p), 'must be well-formed Unicode'),
  v.check((p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p), 'must be relative (global-namespace-root form)'),
  v.check((p) => p.split('/').every((s) => s !== '..' && s !== '.' && s !== ''), 'must not contain empty, "." or ".." segments'),
);

/**
 * A hash a client names bytes by. Not checked against HASH_PATTERN: one that
 * is not `blake3:<64 hex digits>` names no bytes the service has, so it is
 * answered as such (404 blob_not_found, 409 hash_mismatch), not as a 422.
 * Bounded all the same, since refusals echo it.
 */
const clientHash = (description: string) =>
  v.pipe(v.string('must be a string'), v.trim(), v.maxLength(1024, 'must be at most 1024 characters'), v.description(description));

const tags = v.pipe(
  v.array(v.pipe(v.string(), v.minLength(1, 'tags must not be empty'), v.maxLength(64, 'a tag is at most 64 characters'))),
  v.maxLength(32, 'at most 32 tags'),
);

const expiresIn = v.pipe(
  v.number('must be an integer number of seconds'),
  v.integer('must be an integer number of seconds'),
  v.minValue(MIN_EXPIRES_IN, `must be at least ${MIN_EXPIRES_IN}`),
  v.maxValue(MAX_EXPIRES_IN, `must be at most ${MAX_EXPIRES_IN}`),
);

/** Text fields of the multipart upload, after `tags` were gathered and `expires_in` read as a number. */
export const UploadFields = v.object({
  content_type: v.pipe(v.string('is required'), v.minLength(1, 'is required'), mediaType),
  file_path: v.pipe(v.string('is required'), filePath),
  expected_hash: v.optional(
    clientHash('blake3:<hex> of the bytes, verified: any other value (malformed included) is 409 hash_mismatch; empty means not given'),
  ),
  tags: v.optional(tags, []),
  expires_in: v.optional(expiresIn),
});
export type UploadFields = v.InferOutput<typeof UploadFields>;

export const FromHashBody = v.object({
  hash: v.pipe(v.string('is required'), clientHash('blake3:<hex>; a hash of no blob the caller holds (malformed included) is 404 blob_not_found')),
  file_path: v.optional(filePath),
  tags: v.optional(tags, []),
  expires_in: v.optional(expiresIn),
});
export type FromHashBody = v.InferOutput<typeof FromHashBody>;

export const AssetId = v.pipe(v.string(), v.uuid());

/** Per-prompt extra_data: closed to the partner-node key and the public client's alias for it. */
export const EXTRA_DATA_KEYS = ['api_key_platform_org', 'api_key_comfy_org'] as const;
export const ExtraData = v.strictObject({
  api_key_platform_org: v.optional(v.pipe(v.string('must be a string'), v.maxLength(4096, 'must be at most 4096 characters'))),
  api_key_comfy_org: v.optional(v.pipe(v.string('must be a string'), v.maxLength(4096, 'must be at most 4096 characters'))),
});

/** Bounds of `priority` on POST /api/v2/jobs: wide enough for clients of other implementations that take a million either way. */
export const MAX_PRIORITY = 1_000_000;
/** Bytes of `metadata` on POST /api/v2/jobs, as JSON (UTF-8): a label, not a payload. */
export const MAX_METADATA_BYTES = 16 * 1024;

/**
 * Body of POST /api/v2/jobs. Reserved fields, a workflow that is not an
 * object (v.record would take an array) and metadata that is not a small
 * object are refused before this schema runs (jobs/submit.ts); both objects
 * are then kept as sent.
 */
export const JobSubmission = v.object({
  workflow: v.record(v.string(), v.unknown(), 'must be an object of nodes keyed by node id'),
  extra_data: v.optional(ExtraData),
  priority: v.nullish(
    v.pipe(
      v.number('must be an integer'),
      v.integer('must be an integer'),
      v.minValue(-MAX_PRIORITY, `must be at least -${MAX_PRIORITY}`),
      v.maxValue(MAX_PRIORITY, `must be at most ${MAX_PRIORITY}`),
      v.description(
        "Default 0. Higher starts first within the account's queue, FIFO within a priority; accounts still take turns. An addition to the contract.",
      ),
    ),
  ),
  metadata: v.nullish(
    v.pipe(
      v.record(v.string(), v.unknown(), 'must be a JSON object'),
      v.description(
        `Any JSON object of at most ${MAX_METADATA_BYTES} bytes (serialized), stored with the job and shown on it. An addition to the contract.`,
      ),
    ),
  ),
});
export type JobSubmission = v.InferOutput<typeof JobSubmission>;

const timestamp = v.pipe(v.string(), v.isoTimestamp());

/** The Asset object of the contract, as responses carry it. */
export const AssetSchema = v.object({
  id: v.pipe(v.string(), v.uuid()),
  hash: v.nullable(v.pipe(v.string(), v.regex(HASH_PATTERN))),
  size_bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  content_type: v.string(),
  file_path: v.nullable(v.string()),
  created_new: v.optional(v.boolean()),
  created_at: timestamp,
  url: v.pipe(v.string(), v.url()),
  url_expires_at: timestamp,
  expires_at: v.nullable(timestamp),
  job_id: v.optional(v.string()),
});

export const ErrorEnvelopeSchema = v.object({
  error: v.object({
    code: v.string(),
    message: v.string(),
    details: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  }),
});

/** Parses or throws a 422 whose details name the first failing field and list all issues. */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issues = result.issues.map((issue) => ({
    field: v.getDotPath(issue) ?? '(body)',
    // A missing key reports valibot's generic text; say it plainly.
    reason: issue.input === undefined && issue.kind === 'schema' ? 'is required' : issue.message,
  }));
  const first = issues[0];
  throw new ApiError('invalid_request', `${first.field}: ${first.reason}`, { field: first.field, reason: first.reason, issues });
}
