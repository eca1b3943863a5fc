// The video surface's handlers: POST /proxy/videogen/multiframe creates a
// task (auth, exact validation with every problem at once, outbound URL
// policy, the provider's own limits, credits, then a durable row) and
// answers its record in state `created`; GET /proxy/videogen/tasks/{task_id}
// reads the caller's task as it now is. What they throw, the surface answers
// in its `{message, details}` body.

import { isUrlRef } from '../../../lib/image/ref.ts';
import { checkOutboundUrl, OutboundUrlError, type UrlPolicy } from '../../../lib/net/url-guard.ts';
import type { VideoRequest } from '../../../providers/video.ts';
import { videoCredits } from '../../../providers/video-credits.ts';
import { MAX_BODY_BYTES } from '../../../providers/video-limits.ts';
import type { VideoTaskRecord } from '../../../storage/types.ts';
import type { ServiceContext } from '../../context.ts';
import { linkBase } from '../../http/links.ts';
import { readJson } from '../../http/read-json.ts';
import { chargeCredits, proxyAccount } from '../auth.ts';
import { VideoError } from './errors.ts';
import { taskView } from './record.ts';
import { parseMultiframe } from './schema.ts';

const INVALID = 'The request is not valid.';

/** Details for URLs the outbound policy refuses (checked now, so the caller hears of it at once). */
async function refusedUrls(request: VideoRequest, callbackUrl: string | null, policy: UrlPolicy): Promise<string[]> {
  const urls: Array<[field: string, url: string]> = [];
  if (request.start_image !== '' && isUrlRef(request.start_image)) urls.push(['start_image', request.start_image]);
  request.image_settings.forEach((s, i) => {
    if (isUrlRef(s.key_image)) urls.push([`image_settings[${i}].key_image`, s.key_image]);
  });
  if (callbackUrl !== null) urls.push(['callback_url', callbackUrl]);
  const found = await Promise.all(
    urls.map(async ([field, url]) => {
      try {
        await checkOutboundUrl(new URL(url.trim()), policy);
        return null;
      } catch (err) {
        // A name that does not resolve now may later: only a refusal is the caller's to fix.
        if (!(err instanceof OutboundUrlError) || err.kind === 'network') return null;
        const hint = err.kind === 'refused' ? ' (private, loopback and link-local addresses are not allowed on this service)' : '';
        return `${field}: ${err.message}${hint}`;
      }
    }),
  );
  return found.filter((d): d is string => d !== null);
}

export async function createTask(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await proxyAccount(request, ctx);
  const parsed = parseMultiframe(await readJson(request, MAX_BODY_BYTES));
  if (!parsed.ok) throw new VideoError(400, INVALID, parsed.details);
  const { request: video, callback_url } = parsed.value;
  const provider = ctx.providers.video;
  const details = [...(await refusedUrls(video, callback_url, ctx.config.outbound)), ...(provider.check?.(video) ?? [])];
  if (details.length > 0) throw new VideoError(400, INVALID, details);

  const credits = videoCredits(video);
  await chargeCredits(ctx, account.id, credits, 'multi-frame video');
  const now = ctx.now();
  const task: VideoTaskRecord = {
    id: crypto.randomUUID(),
    account_id: account.id,
    state: 'created',
    request: { ...video, ...(callback_url !== null ? { callback_url } : {}) },
    credits,
    provider: provider.name,
    provider_task_id: null,
    link_base: linkBase(ctx, request),
    output_asset_id: null,
    error: null,
    created_at: now,
    updated_at: now,
    // Kept as long as a job: GET and the output's URL work until then.
    expires_at: now + ctx.config.jobRetentionMs,
  };
  await ctx.metadata.createVideoTask(task);
  ctx.videoTasks.accept(task);
  return Response.json(await taskView(ctx, task, task.link_base));
}

export async function getTask(request: Request, ctx: ServiceContext, taskId: string): Promise<Response> {
  const account = await proxyAccount(request, ctx);
  const task = await ctx.metadata.getVideoTask(account.id, taskId);
  if (!task || task.expires_at <= ctx.now()) throw new VideoError(404, 'No video task with this id.');
  return Response.json(await taskView(ctx, task, linkBase(ctx, request)));
}
