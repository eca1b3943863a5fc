// GET /api/v2/assets/{id}/content: the bytes, streamed from the blob store,
// with single byte ranges (206/416). Reached with the caller's credentials or
// through the signed URL an Asset carries, which needs no auth header at all.
import type { AccountRecord, AssetRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, notFound } from '../errors.ts';
import { parseRange } from '../http/range.ts';
import { findOwnAsset } from './read.ts';
import { contentSubject } from './view.ts';

/** `Content-Disposition` with an ASCII fallback and the UTF-8 name (RFC 6266). */
export function contentDisposition(filePath: string | null): string {
  const name = (filePath ?? '').split('/').pop() || 'content';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  // encodeURIComponent throws on a lone surrogate; such a name gets U+FFFD instead.
  const wellFormed = name.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(wellFormed)}`;
}

/** If-None-Match uses weak comparison (RFC 9110 §13.1.2): `W/` is ignored and `*` matches. */
function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

async function resolveAccount(request: Request, ctx: ServiceContext, id: string): Promise<AccountRecord> {
  const params = new URL(request.url).searchParams;
  // Credentials win over a link: a caller who may read the asset is not refused for a stale `sig`.
  if (!params.has('sig') || request.headers.has('authorization')) return ctx.auth.authenticate(request);
  const accountId = params.get('account') ?? '';
  if (!(await ctx.signer.verify(contentSubject({ id, account_id: accountId }), params, ctx.now()))) {
    // An expired or forged link is the same as no link: the caller gets nothing.
    throw new ApiError('forbidden', 'This content link is invalid or has expired; fetch the asset again for a fresh url.');
  }
  return { id: accountId, tier: '', created_at: 0 };
}

/**
 * A 302 to the blob store's presigned URL, when the operator turned download
 * redirects on and the store signs URLs; the client then sends its Range to
 * the store. HEAD and a revalidation that matched (304, above) stay here.
 */
async function downloadRedirect(ctx: ServiceContext, request: Request, asset: AssetRecord): Promise<Response | null> {
  const ttl = ctx.config.downloadRedirectSeconds;
  if (ttl === 0 || request.method === 'HEAD' || !ctx.blobs.signedUrl) return null;
  const name = (asset.file_path ?? '').split('/').pop() || 'content';
  const location = await ctx.blobs.signedUrl(asset.blob_key, { expiresInSeconds: ttl, filename: name, contentType: asset.content_type });
  return new Response(null, { status: 302, headers: { Location: location, 'Cache-Control': 'private, no-store' } });
}

export async function getAssetContent(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await resolveAccount(request, ctx, id);
  const asset: AssetRecord = await findOwnAsset(ctx, account, id);
  const etag = asset.hash ? `"${asset.hash.slice('blake3:'.length)}"` : null;
  const headers = new Headers({
    'Content-Type': asset.content_type,
    'Accept-Ranges': 'bytes',
    'Content-Disposition': contentDisposition(asset.file_path),
    'X-Content-Type-Options': 'nosniff',
    // Uploaded HTML or SVG must not run scripts on the API's origin.
    'Content-Security-Policy': "sandbox; default-src 'none'",
    'Cache-Control': 'private, max-age=0, must-revalidate',
  });
  if (etag) headers.set('ETag', etag);
  if (etag && matchesIfNoneMatch(request.headers.get('if-none-match'), etag)) {
    return new Response(null, { status: 304, headers });
  }

  const redirect = await downloadRedirect(ctx, request, asset);
  if (redirect) return redirect;
  const size = asset.size_bytes;
  // A validator that no longer matches turns a range request into a full one (If-Range).
  const ifRange = request.headers.get('if-range');
  const rangeHeader = ifRange !== null && ifRange !== etag ? null : request.headers.get('range');
  const range = parseRange(rangeHeader, size);
  if (range.kind === 'unsatisfiable') {
    throw new ApiError(
      'range_not_satisfiable',
      `The range cannot be served from ${size} bytes.`,
      { size_bytes: size },
      {
        'Content-Range': `bytes */${size}`,
      },
    );
  }
  const slice = range.kind === 'partial' ? range.range : undefined;
  const body = request.method === 'HEAD' ? null : await ctx.blobs.get(asset.blob_key, slice);
  if (request.method !== 'HEAD' && body === null) {
    // Deleted (and its bytes collected) since it was looked up: as absent as any other.
    if (!(await ctx.metadata.getAsset(account.id, asset.id, ctx.now()))) throw notFound('No asset with this id.');
    throw new Error(`blob ${asset.blob_key} of asset ${asset.id} is missing from the blob store`);
  }
  if (slice) {
    headers.set('Content-Range', `bytes ${slice.start}-${slice.end}/${size}`);
    headers.set('Content-Length', String(slice.end - slice.start + 1));
    return new Response(body, { status: 206, headers });
  }
  headers.set('Content-Length', String(size));
  return new Response(body, { status: 200, headers });
}
