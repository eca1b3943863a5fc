// The Asset object of the v2 contract, built from a stored record with a
// fresh signed content URL on every read.
import type { AssetRecord } from '../../storage/types.ts';
import type * as v from 'valibot';
import { linkBase, type ServiceContext } from '../context.ts';
import type { AssetSchema } from '../schemas.ts';
import { signedUrlExpiry } from '../signing.ts';

export type AssetView = v.InferOutput<typeof AssetSchema>;

const iso = (ms: number) => new Date(ms).toISOString();

/** The subject a content URL signs: the asset and its owner, so a URL serves only that record. */
export const contentSubject = (asset: Pick<AssetRecord, 'id' | 'account_id'>) => `asset:${asset.account_id}:${asset.id}`;

export function contentPath(id: string): string {
  return `/api/v2/assets/${id}/content`;
}

export async function assetView(
  ctx: ServiceContext,
  request: Request,
  asset: AssetRecord,
  createdNew?: boolean,
): Promise<AssetView> {
  // On a coarse grid of whole seconds (see signedUrlExpiry), the same as the signature carries.
  const urlExpires = signedUrlExpiry(ctx.now(), ctx.signedUrlTtlSeconds);
  const params = ctx.signer.sign(contentSubject(asset), urlExpires);
  params.set('account', asset.account_id);
  const view: AssetView = {
    id: asset.id,
    hash: asset.hash,
    size_bytes: asset.size_bytes,
    content_type: asset.content_type,
    file_path: asset.file_path,
    created_at: iso(asset.created_at),
    url: `${linkBase(ctx, request)}${contentPath(asset.id)}?${params}`,
    url_expires_at: iso(urlExpires),
    expires_at: asset.expires_at === null ? null : iso(asset.expires_at),
  };
  if (createdNew !== undefined) view.created_new = createdNew;
  if (asset.job_id !== null) view.job_id = asset.job_id;
  return view;
}
