// POST /api/v2/assets/from-hash and HEAD /api/v2/assets/by-hash/{hash}: the
// zero-byte fast path. A hash resolves only to bytes this service hashed and
// the caller already holds an asset over; "absent" and "not yours" look alike,
// and so does a hash that is not `blake3:<64 hex digits>`: it names no blob,
// and the contract answers these operations with 404, never 422.
import type { AccountRecord, AssetRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { parseHash } from '../hash.ts';
import { readJson } from '../http/read-json.ts';
import { jsonResponse } from '../http/request-options.ts';
import { withIdempotency } from '../idempotency.ts';
import { FromHashBody, validate } from '../schemas.ts';
import { mintAsset } from './ingest.ts';
import { assetView } from './view.ts';

const sameTags = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** The caller's live assets over the blob of this client-written hash; none for a malformed one. */
async function mintableAssets(ctx: ServiceContext, account: AccountRecord, rawHash: string): Promise<AssetRecord[]> {
  const hash = parseHash(rawHash);
  return hash === null ? [] : ctx.metadata.listAssetsByHash(account.id, hash, ctx.now());
}

export async function headByHash(request: Request, ctx: ServiceContext, rawHash: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const found = await mintableAssets(ctx, account, rawHash);
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
    const retention = body.expires_in ?? ctx.config.defaultRetentionSeconds;
    const deadline = retention === null ? null : ctx.now() + retention * 1000;
    // "Identical" means same path and tags, living at least as long as asked:
    // returning a shorter-lived record would shorten the retention requested.
    const same = existing.find(
      (a) => a.file_path === filePath && sameTags(a.tags, body.tags) && (a.expires_at === null || (deadline !== null && a.expires_at >= deadline)),
    );
    if (same) {
      commitment.committed();
      return jsonResponse(request, await assetView(ctx, request, same, false), { status: 200 });
    }
    // mintAsset lists the account's copies again under the blob lock: the one
    // above may be stale by then (a delete and collection in between).
    const result = await mintAsset(
      ctx,
      { hash: existing[0].hash ?? body.hash, size: existing[0].size_bytes, key: existing[0].blob_key },
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
    return jsonResponse(request, await assetView(ctx, request, result.asset, false), { status: 201 });
  });
}
