// How an upload of the cloud surface becomes an asset of the caller: its name
// is the content-addressed `<blake3 hex><.ext>` (file_path, so LoadImage finds
// it by name), tagged with its `type`. Retention: input and output uploads
// keep the service's default; temp uploads live 24 hours (or the default, if
// shorter), like the reference's temp folder that is emptied on restart.
// Re-uploading bytes the caller already holds under that name, as that type
// and for at least as long, stores nothing new and answers the same name.
import type { AccountRecord, AssetRecord } from '../../storage/types.ts';
import { discardBlob, mintAsset, type StagedBlob, scheduleScan } from '../assets/ingest.ts';
import { assetView } from '../assets/view.ts';
import type { ServiceContext } from '../context.ts';
import { extensionOf } from './file-names.ts';
import type { FileType } from './file-params.ts';

export const TEMP_RETENTION_SECONDS = 24 * 60 * 60;

/** The upload's retention deadline (epoch ms), null = never expires. */
export function uploadExpiry(ctx: ServiceContext, type: FileType): number | null {
  const fallback = ctx.config.defaultRetentionSeconds;
  const seconds = type === 'temp' ? Math.min(TEMP_RETENTION_SECONDS, fallback ?? Infinity) : fallback;
  return seconds === null ? null : ctx.now() + seconds * 1000;
}

export interface UploadResult {
  name: string;
  subfolder: '';
  type: FileType;
}

/** Whether `asset` already stands for this upload: same bytes, same type, living at least as long. */
function covers(asset: AssetRecord | null, hash: string, type: FileType, expires: number | null): asset is AssetRecord {
  if (!asset || asset.hash !== hash || !asset.tags.includes(type)) return false;
  return asset.expires_at === null || (expires !== null && asset.expires_at >= expires);
}

/**
 * Commits the staged bytes as the caller's file (or reuses the one it has) and
 * answers `{name, subfolder: '', type}`. The writer is always settled.
 */
export async function storeUpload(
  ctx: ServiceContext,
  request: Request,
  account: AccountRecord,
  staged: StagedBlob,
  file: { fileName: string | null; contentType: string; type: FileType },
): Promise<UploadResult & { asset: AssetRecord }> {
  const name = `${staged.hash.slice('blake3:'.length)}${extensionOf(file.fileName, file.contentType)}`;
  const expires = uploadExpiry(ctx, file.type);
  const existing = await ctx.metadata.findAssetByPath(account.id, name, ctx.now()).catch(async (err) => {
    await discardBlob(ctx, staged.writer);
    throw err;
  });
  if (covers(existing, staged.hash, file.type, expires)) {
    await discardBlob(ctx, staged.writer);
    ctx.metrics.uploaded('cloud', staged.size);
    return { name, subfolder: '', type: file.type, asset: existing };
  }
  const result = await mintAsset(ctx, staged, {
    account_id: account.id,
    content_type: file.contentType,
    file_path: name,
    tags: [file.type],
    expires_at: expires,
    job_id: null,
  });
  ctx.metrics.uploaded('cloud', staged.size);
  // Bytes are scanned once, when first stored.
  if (result.blob_created) scheduleScan(ctx, result.asset, await assetView(ctx, request, result.asset, result.created_new));
  return { name, subfolder: '', type: file.type, asset: result.asset };
}
