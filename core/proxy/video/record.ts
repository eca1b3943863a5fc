// The task record as GET, the POST answer and callbacks show it: the
// spec's fields (credits, state, task_id, created_at and the request's own),
// then, once done, the output video as a v2 Asset with a signed URL, or the
// error body of a failed task.
import type { VideoTaskRecord } from '../../../storage/types.ts';
import { assetViewAt } from '../../assets/view.ts';
import type { ServiceBase } from '../../context.ts';
import { isoTime } from '../../iso-time.ts';

/** The record of `task`; links start with `base` (origin and mount prefix). */
export async function taskView(ctx: ServiceBase, task: VideoTaskRecord, base: string): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {
    task_id: task.id,
    state: task.state,
    credits: task.credits,
    created_at: isoTime(task.created_at),
    updated_at: isoTime(task.updated_at),
    ...task.request,
  };
  if (task.output_asset_id !== null) {
    const asset = await ctx.metadata.getAsset(task.account_id, task.output_asset_id, ctx.now());
    // Gone only if deleted by its owner: the record still says success.
    if (asset) view.output = assetViewAt(ctx, base, asset);
  }
  if (task.error !== null) view.error = task.error;
  return view;
}
