// The task record as GET, the POST answer and callbacks show it: the
// spec's fields (credits, state, task_id, created_at and the request's own),
// then, once done, the output video as a v2 Asset with a signed URL, or the
// error body of a failed task.
import type { AssetRecord, VideoTaskRecord } from '../../../storage/types.ts';
import type { AssetView } from '../../assets/view.ts';
import { signedContentUrl } from '../../assets/view.ts';
import type { ServiceContext } from '../../context.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * assetView for a link base instead of a request: a callback is delivered
 * long after the request that created the task, so the base is stored.
 */
function assetAt(ctx: ServiceContext, base: string, asset: AssetRecord): AssetView {
  const { url, url_expires_at } = signedContentUrl(ctx, base, asset);
  return {
    id: asset.id,
    hash: asset.hash,
    size_bytes: asset.size_bytes,
    content_type: asset.content_type,
    file_path: asset.file_path,
    created_at: iso(asset.created_at),
    url,
    url_expires_at,
    expires_at: asset.expires_at === null ? null : iso(asset.expires_at),
  };
}

/** The record of `task`; links start with `base` (origin and mount prefix). */
export async function taskView(ctx: ServiceContext, task: VideoTaskRecord, base: string): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {
    task_id: task.id,
    state: task.state,
    credits: task.credits,
    created_at: iso(task.created_at),
    updated_at: iso(task.updated_at),
    ...task.request,
  };
  if (task.output_asset_id !== null) {
    const asset = await ctx.metadata.getAsset(task.account_id, task.output_asset_id, ctx.now());
    // Gone only if deleted by its owner: the record still says success.
    if (asset) view.output = assetAt(ctx, base, asset);
  }
  if (task.error !== null) view.error = task.error;
  return view;
}
