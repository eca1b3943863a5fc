// POST /api/v2/assets/from-hash and HEAD /api/v2/assets/by-hash/{hash}: the
// zero-byte fast path. A hash resolves only to bytes this service hashed and
// the caller already holds an asset over; "absent" and "not yours" look alike.
import type { AccountRecord, AssetRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { parseHash } from '../hash.ts';
import { withIdempotency } from '../idempotency.ts';
import { FromHashBody, validate } from '../schemas.ts';
import { mintAsset } from './ingest.ts';
import { assetView } from './view.ts';

const MAX_JSON_BYTES = 64 * 1024;

/** Reads a small JSON body, refusing oversized or unparseable ones with 4xx. */
export async function readJson(request: Request, max = MAX_JSON_BYTES): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new ApiError('unsupported_media_type', 'The body must be application/json.');
  }
  const tooLarge = () => new ApiError('payload_too_large', `The JSON body is larger than ${max} bytes.`, { limit_bytes: max });
  if (Number(request.headers.get('content-length') ?? 0) > max) throw tooLarge();
  // Read with a cap, since a chunked body announces no length.
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { value, done } = await reader.read().catch((err: unknown) => {
        // A runtime adapter's own body limit (status 413) is a size refusal.
        if ((err as { status?: unknown } | null)?.status === 413) throw tooLarge();
        throw new ApiError('malformed_request', 'The request body ended early.');
      });
      if (done) break;
      size += value.length;
      if (size > max) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError('malformed_request', 'The body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('malformed_request', 'The body is not valid JSON.');
  }
}

const sameTags = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

async function mintableAssets(ctx: ServiceContext, account: AccountRecord, hash: string): Promise<AssetRecord[]> {
  return ctx.metadata.listAssetsByHash(account.id, hash, ctx.now());
}

export async function headByHash(request: Request, ctx: ServiceContext, rawHash: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const hash = parseHash(rawHash);
  if (!hash) throw invalid('hash: must be blake3:<64 hex digits>', 'hash', 'invalid format');
  const found = await mintableAssets(ctx, account, hash);
  return new Response(null, { status: found.length > 0 ? 200 : 404 });
}

export async function assetFromHash(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const body = validate(FromHashBody, await readJson(request));
  return withIdempotency(ctx, request, account, async (commitment) => {
    const existing = await mintableAssets(ctx, account, body.hash);
    if (existing.length === 0) {
      throw new ApiError('blob_not_found', 'No stored content with this hash is available to this account.');
    }
    const filePath = body.file_path ?? existing[0].file_path;
    const retention = body.expires_in ?? ctx.defaultRetentionSeconds;
    const deadline = retention === null ? null : ctx.now() + retention * 1000;
    // "Identical" means same path and tags, living at least as long as asked:
    // returning a shorter-lived record would shorten the retention requested.
    const same = existing.find(
      (a) =>
        a.file_path === filePath &&
        sameTags(a.tags, body.tags) &&
        (a.expires_at === null || (deadline !== null && a.expires_at >= deadline)),
    );
    if (same) {
      commitment.committed();
      return Response.json(await assetView(ctx, request, same, false), { status: 200 });
    }
    // mintAsset lists the account's copies again under the blob lock: the one
    // above may be stale by then (a delete and collection in between).
    const result = await mintAsset(
      ctx,
      { hash: body.hash, size: existing[0].size_bytes, key: existing[0].blob_key },
      {
        account_id: account.id,
        content_type: existing[0].content_type,
        file_path: filePath,
        tags: body.tags,
        expires_at: deadline,
        job_id: null,
      },
    );
    commitment.committed();
    return Response.json(await assetView(ctx, request, result.asset, false), { status: 201 });
  });
}
