// createService: builds the service's context and routes into one object with
// a Web `fetch`, WebSocket hooks and `close`. Adapters only convert to and
// from it. This is the core's factory: the caller gives the engine and the
// providers (the package's entry, index.ts, chooses the defaults).

import { buildContext, type CoreServiceOptions } from './context.ts';
import { claimBlobPlace } from './deployments/blob-claims.ts';
import { envelope } from './errors.ts';
import { urlPath } from './http/links.ts';
import { setRequestOptions } from './http/request-options.ts';
import { createRouter } from './http/routes.ts';
import { closingReadiness, isReadinessProbe } from './ops/readiness.ts';
import { markOwnService } from './own-services.ts';
import { VIDEO_CALLBACK, videoCallbackKind } from './proxy/video/callbacks.ts';
import { sweep, sweepOrphans } from './sweeper.ts';
import type { Service } from './types.ts';
import { JOB_WEBHOOK, jobWebhookKind } from './webhooks/job-events.ts';
import { createWebSocketHooks } from './ws/hooks.ts';

/** Listing the whole blob store is not for every sweep: at start, then at most this often. */
const ORPHAN_SCAN_INTERVAL_MS = 3600_000;

export async function createService(options: CoreServiceOptions): Promise<Service> {
  const ctx = await buildContext(options);
  const { logger, config } = ctx;
  // Requests under way, and whoever waits for them to end (close()).
  let active = 0;
  let drainWaiters: Array<() => void> = [];
  const settle = () => {
    if (--active > 0) return;
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const w of waiters) w();
  };
  const drained = () => (active === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve)));
  let closed = false;

  // Whether the operator stopped this deployment, and the registered engine servers, before the first job is looked at.
  // Each deployment's storage is its own: its database (across processes), then its blob store's place (in this one).
  await ctx.deployment.open();
  let releaseBlobs = () => {};
  try {
    releaseBlobs = claimBlobPlace(ctx.blobs, ctx.deployment.id);
    await ctx.servers.start();
    await ctx.jobs.start();
    await ctx.videoTasks.start();
  } catch (err) {
    // A start that fails (a runner lock held elsewhere, say) leaves nothing running or claimed behind.
    releaseBlobs();
    ctx.deployment.close();
    ctx.servers.close();
    await ctx.jobs.close().catch(() => {});
    await ctx.videoTasks.close().catch(() => {});
    throw err;
  }
  // Deliveries left pending by an earlier run go out now, with whatever this start wrote.
  ctx.webhooks.start({ [JOB_WEBHOOK]: jobWebhookKind(ctx), [VIDEO_CALLBACK]: videoCallbackKind(ctx) });

  const router = createRouter(ctx);
  let orphansScannedAt = ctx.now();
  const runSweep = (orphans: boolean) => {
    if (orphans) orphansScannedAt = ctx.now();
    return sweep(ctx, { orphans });
  };
  // A crash's leftovers go at start, after the service answers: the listing may take a while.
  if (config.sweepIntervalMs > 0) ctx.background.run('orphan blob files', async () => void (await sweepOrphans(ctx)));
  let sweeping: Promise<unknown> = Promise.resolve();
  let sweepRunning = false;
  const timer =
    config.sweepIntervalMs > 0
      ? setInterval(() => {
          if (sweepRunning) return; // a slow pass must not overlap the next one
          sweepRunning = true;
          sweeping = runSweep(ctx.now() - orphansScannedAt >= ORPHAN_SCAN_INTERVAL_MS)
            .catch((err) => logger.error('sweep failed', { error: String(err) }))
            .finally(() => (sweepRunning = false));
        }, config.sweepIntervalMs)
      : undefined;
  // A timer must not keep a process alive that has nothing else to do.
  (timer as { unref?: () => void } | undefined)?.unref?.();

  const service: Service = {
    deploymentId: ctx.deployment.id,
    fetch: (request, fetchOptions) => {
      if (closed) {
        // A readiness probe gets its own shape: load balancers read `checks` to say why the instance left.
        if (isReadinessProbe(request, urlPath(request.url))) return Promise.resolve(closingReadiness(request));
        return Promise.resolve(
          Response.json(envelope('upstream_error', 'The service is shutting down.'), { status: 503, headers: { 'Retry-After': '1' } }),
        );
      }
      if (fetchOptions !== undefined && fetchOptions !== null) {
        try {
          setRequestOptions(request, fetchOptions);
        } catch (err) {
          return Promise.reject(err);
        }
      }
      // Tracked so close() lets requests under way finish before the stores close.
      const p = router.handle(request);
      active++;
      // One reaction per request (not then + finally + a Set entry): this runs on every call.
      p.then(settle, settle);
      return p;
    },
    websocket: createWebSocketHooks(ctx, { maxBufferedBytes: config.maxWebSocketBufferedBytes }),
    refuse: router.refuse,
    sweep: () => runSweep(true),
    idle: ctx.background.idle,
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await drained();
      ctx.servers.close();
      ctx.deployment.close();
      await ctx.jobs.close();
      // The runs' last events (their end) go to the other instances before the bus closes.
      await ctx.jobs.hub.flush?.();
      await ctx.videoTasks.close();
      // After the runs' and tasks' last moves: what they wrote and could not send stays for the next start.
      await ctx.webhooks.close();
      await Promise.all([ctx.providers.music.close?.(), ctx.providers.video.close?.()]);
      await sweeping;
      await ctx.background.idle();
      await ctx.events?.close();
      await ctx.metadata.close();
      await ctx.blobs.close?.();
      releaseBlobs();
    },
  };
  return markOwnService(service);
}
