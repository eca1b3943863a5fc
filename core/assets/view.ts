// The Asset object of the v2 contract, built from a stored record with a
// fresh signed content URL on every read.

import type * as v from 'valibot';
import type { AssetRecord } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';
import { linkBase } from '../http/links.ts';
import { isoTime, isoTimeOrNull } from '../iso-time.ts';
import type { AssetSchema } from '../schemas.ts';
import { signedUrlExpiry } from '../signing.ts';

export type AssetView = v.InferOutput<typeof AssetSchema>;

/** The subject a content URL signs: the asset and its owner, so a URL serves only that record. */
export const contentSubject = (asset: Pick<AssetRecord, 'id' | 'account_id'>) => `asset:${asset.account_id}:${asset.id}`;

export function contentPath(id: string): string {
  return `/api/v2/assets/${id}/content`;
}

/**
 * A query value encoded exactly as URLSearchParams serialises it
 * (application/x-www-form-urlencoded: space as '+', only *-._ and
 * alphanumerics left as they are).
 */
const FORM_SAFE = /^[A-Za-z0-9*\-._]*$/;

export function formEncode(value: string): string {
  // Account ids are usually plain words: nothing to encode.
  if (FORM_SAFE.test(value)) return value;
  let encoded: string;
  try {
    encoded = encodeURIComponent(value);
  } catch {
    // A lone surrogate: URLSearchParams writes it as U+FFFD.
    return new URLSearchParams([['', value]]).toString().slice(1);
  }
  return encoded.replace(/%20/g, '+').replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

// Every URL signed within one step of the expiry grid has the same expiry: format it once.
let lastExpiry = { ms: NaN, iso: '' };

/**
 * The signed content URL of an asset (`base` is `linkBase(ctx, request)`)
 * and when it expires: on a coarse grid of whole seconds (see
 * signedUrlExpiry), the same instant the signature carries.
 */
export function signedContentUrl(ctx: ServiceBase, base: string, asset: AssetRecord): { url: string; url_expires_at: string } {
  const expires = signedUrlExpiry(ctx.now(), ctx.config.signedUrlTtlSeconds);
  if (lastExpiry.ms !== expires) lastExpiry = { ms: expires, iso: isoTime(expires) };
  const query = `${ctx.signer.signQuery(contentSubject(asset), expires)}&account=${formEncode(asset.account_id)}`;
  return { url: `${base}${contentPath(asset.id)}?${query}`, url_expires_at: lastExpiry.iso };
}

/**
 * The Asset with links under `base` (origin and mount prefix): a request's
 * `linkBase`, or one stored for a delivery long after the request.
 */
export function assetViewAt(ctx: ServiceBase, base: string, asset: AssetRecord): AssetView {
  const { url, url_expires_at } = signedContentUrl(ctx, base, asset);
  return {
    id: asset.id,
    hash: asset.hash,
    size_bytes: asset.size_bytes,
    content_type: asset.content_type,
    file_path: asset.file_path,
    created_at: isoTime(asset.created_at),
    url,
    url_expires_at,
    expires_at: isoTimeOrNull(asset.expires_at),
  };
}

export async function assetView(ctx: ServiceBase, request: Request, asset: AssetRecord, createdNew?: boolean): Promise<AssetView> {
  const view = assetViewAt(ctx, linkBase(ctx, request), asset);
  if (createdNew !== undefined) view.created_new = createdNew;
  if (asset.job_id !== null) view.job_id = asset.job_id;
  return view;
}
