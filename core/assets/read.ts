// GET and DELETE /api/v2/assets/{id}. Another account's asset, an expired one
// and a deleted one all answer a plain 404, indistinguishable from absent.

import * as v from 'valibot';
import type { AccountRecord, AssetRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { jsonResponse } from '../http/request-options.ts';
import { AssetId } from '../schemas.ts';
import { collectBlob } from './ingest.ts';
import { assetView } from './view.ts';

/** The caller's live asset, or 404; a malformed id is just another unknown id. */
export async function findOwnAsset(ctx: ServiceContext, account: AccountRecord, id: string): Promise<AssetRecord> {
  if (!v.is(AssetId, id)) throw notFound('No asset with this id.');
  const asset = await ctx.metadata.getAsset(account.id, id.toLowerCase(), ctx.now());
  if (!asset) throw notFound('No asset with this id.');
  return asset;
}

export async function getAsset(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const asset = await findOwnAsset(ctx, account, id);
  return jsonResponse(request, await assetView(ctx, request, asset), { headers: { 'Cache-Control': 'no-store' } });
}

export async function deleteAsset(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const asset = await findOwnAsset(ctx, account, id);
  if (!(await ctx.metadata.deleteAsset(account.id, asset.id, ctx.now()))) throw notFound('No asset with this id.');
  // The bytes go only when nothing else references them; collection takes the blob lock.
  ctx.background.run(`collect ${asset.blob_key}`, async () => void (await collectBlob(ctx, asset.blob_key)));
  return new Response(null, { status: 204 });
}
