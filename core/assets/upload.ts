// POST /api/v2/assets: a streamed multipart upload. The file part goes through
// blake3 into a temporary blob while the small fields are gathered; only when
// the whole body is in and valid is the blob committed and the asset minted.

import type { ServiceContext } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { parseHash } from '../hash.ts';
import { MultipartError, MultipartLimitError, multipartBoundary, parseMultipart, readPartText } from '../http/multipart.ts';
import { jsonResponse } from '../http/request-options.ts';
import { withIdempotency } from '../idempotency.ts';
import { UploadFields, validate } from '../schemas.ts';
import { discardBlob, mintAsset, type StagedBlob, scheduleScan, stageBlob } from './ingest.ts';
import { assetView } from './view.ts';

const TEXT_FIELDS = new Set(['content_type', 'file_path', 'expected_hash', 'expires_in', 'tags', 'tags[]']);
const MAX_FIELD_BYTES = 64 * 1024;

function tooLarge(max: number) {
  return new ApiError('payload_too_large', `The upload is larger than the limit of ${max} bytes.`, { limit_bytes: max });
}

/** `tags` may come as repeated fields or as one JSON array. */
function addTags(into: string[], raw: string) {
  const text = raw.trim();
  if (text.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalid('tags: not a valid JSON array', 'tags', 'must be a JSON array of strings or repeated fields');
    }
    if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === 'string')) {
      throw invalid('tags: must be an array of strings', 'tags', 'must be an array of strings');
    }
    into.push(...parsed);
  } else if (text !== '') {
    into.push(text);
  }
}

function expiresInNumber(raw: string | undefined): number | string | undefined {
  if (raw === undefined) return undefined;
  return /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
}

export async function uploadAsset(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const boundary = multipartBoundary(request.headers.get('content-type'));
  if (!boundary) {
    throw new ApiError('unsupported_media_type', 'The body must be multipart/form-data with a boundary.');
  }
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > ctx.config.maxUploadBytes) throw tooLarge(ctx.config.maxUploadBytes);
  if (!request.body) throw new ApiError('malformed_request', 'The request has no body.');
  const body = request.body;

  return withIdempotency(ctx, request, account, async (commitment) => {
    let staged: StagedBlob | null = null;
    try {
      const text: Record<string, string> = {};
      const tags: string[] = [];
      for await (const part of parseMultipart(body, boundary, { maxBodyBytes: ctx.config.maxUploadBytes })) {
        if (part.name === 'file') {
          if (staged) throw invalid('file: given more than once', 'file', 'must appear once');
          staged = await stageBlob(ctx, part.body);
        } else if (TEXT_FIELDS.has(part.name)) {
          const value = await readPartText(part, MAX_FIELD_BYTES);
          if (part.name.startsWith('tags')) addTags(tags, value);
          else if (part.name in text) throw invalid(`${part.name}: given more than once`, part.name, 'must appear once');
          else text[part.name] = value;
        }
        // Other parts are skipped; the parser drains them.
      }
      const fields = validate(UploadFields, {
        ...text,
        expires_in: expiresInNumber(text.expires_in),
        tags,
      });
      if (!staged) throw invalid('file: is required', 'file', 'is required');
      // Compared in the normal form (any case); a value that is no blake3 hash at all
      // differs from the computed one like any other. An empty field is no claim.
      const expected = fields.expected_hash || undefined;
      if (expected !== undefined && (parseHash(expected) ?? expected) !== staged.hash) {
        throw new ApiError(
          'hash_mismatch',
          'The uploaded bytes do not match expected_hash; nothing was stored.',
          { expected_hash: expected, computed_hash: staged.hash },
          { 'Retry-After': '1' },
        );
      }
      const now = ctx.now();
      const retention = fields.expires_in ?? ctx.config.defaultRetentionSeconds;
      const result = await mintAsset(ctx, staged, {
        account_id: account.id,
        content_type: fields.content_type,
        file_path: fields.file_path,
        tags: fields.tags,
        expires_at: retention === null ? null : now + retention * 1000,
        job_id: null,
      });
      ctx.metrics.uploaded('v2', staged.size);
      staged = null;
      commitment.committed();
      const view = await assetView(ctx, request, result.asset, result.created_new);
      // Bytes are scanned once, when first stored; a dedup hit was scanned then.
      if (result.blob_created) scheduleScan(ctx, result.asset, view);
      return jsonResponse(request, view, { status: result.created_new ? 201 : 200 });
    } catch (err) {
      if (staged) await discardBlob(ctx, (staged as StagedBlob).writer);
      if (err instanceof MultipartLimitError) throw tooLarge(ctx.config.maxUploadBytes);
      if (err instanceof MultipartError) {
        throw new ApiError('malformed_request', `The multipart body could not be parsed: ${err.message}.`);
      }
      throw err;
    }
  });
}
