// createService: wires storage, auth, signing and routes into one object with
// a Web `fetch`, WebSocket hooks and `close`. Adapters only convert to and from it.
import type { Service, ServiceOptions } from './types.ts';
import { setMountPrefix, type ServiceContext } from './context.ts';
import { createAuthenticator } from './auth.ts';
import { createHasher } from './hash.ts';
import { KeyedMutex } from './keyed-mutex.ts';
import { envelope } from './errors.ts';
import { consoleLogger } from './log.ts';
import { createRouter } from './routes.ts';
import { createUrlSigner, randomSecret } from './signing.ts';
import { sweep } from './sweeper.ts';
import { createWebSocketHooks } from './websocket.ts';
import { createJobSystem } from './jobs/system.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { closeVideoTasks, startVideoTasks } from './proxy/video/tasks.ts';

export const DEFAULT_MAX_UPLOAD_BYTES = 110 * 1024 * 1024;

export async function createService(options: ServiceOptions): Promise<Service> {
  const { metadata, blobs } = options.storage;
  const logger = options.logger ?? consoleLogger;
  const now = options.now ?? Date.now;
  await metadata.migrate();
  // A persisted random key keeps signed URLs valid across restarts without configuration.
  const secret = options.signingSecret ?? (await metadata.initSetting('url_signing_secret', randomSecret()));
  const pending = new Set<Promise<void>>();
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

  // `jobs` is attached right below: the job system itself needs the context.
  const ctx: ServiceContext = {
    jobs: undefined as unknown as ServiceContext['jobs'],
    metadata,
    blobs,
    auth: await createAuthenticator(metadata, { token: options.token, accounts: options.accounts, now }),
    signer: await createUrlSigner(secret),
    blobLocks: new KeyedMutex(),
    logger,
    now,
    maxUploadBytes: options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    defaultRetentionSeconds: options.defaultRetentionSeconds ?? null,
    signedUrlTtlSeconds: options.signedUrlTtlSeconds ?? 3600,
    publicBaseUrl: options.publicBaseUrl,
    scanner: options.scanner,
    subscriptions: options.subscriptions,
    credits: options.credits,
    options,
    createHasher: options.hasher ?? createHasher,
    background(label, work) {
      // Started on a later task so it can never delay the response being returned.
      const p = new Promise<void>((resolve) => setTimeout(resolve, 0))
        .then(work)
        .catch((err) => logger.error(`background task failed: ${label}`, { error: String(err?.stack ?? err) }))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
  };

  // The built-in engine follows the operator's outbound policy (LoadImageFromURL).
  const engine = options.engine ?? createLocalEngine({ settings: { allowPrivateUrls: options.allowPrivateUrls === true, resolveHost: options.resolveHost } });
  ctx.jobs = createJobSystem(ctx, options, engine);
  await ctx.jobs.start();
  await startVideoTasks(ctx);

  const handle = createRouter(ctx);
  const runSweep = () => sweep(ctx);
  const interval = options.sweepIntervalMs ?? 60_000;
  let sweeping: Promise<unknown> = Promise.resolve();
  let sweepRunning = false;
  const timer =
    interval > 0
      ? setInterval(() => {
          if (sweepRunning) return; // a slow pass must not overlap the next one
          sweepRunning = true;
          sweeping = runSweep()
            .catch((err) => logger.error('sweep failed', { error: String(err) }))
            .finally(() => (sweepRunning = false));
        }, interval)
      : undefined;
  // A timer must not keep a process alive that has nothing else to do.
  (timer as { unref?: () => void } | undefined)?.unref?.();

  const idle = async () => {
    while (pending.size > 0) await Promise.all([...pending]);
  };

  return {
    fetch: (request, fetchOptions) => {
      if (closed) {
        return Promise.resolve(
          Response.json(envelope('upstream_error', 'The service is shutting down.'), { status: 503, headers: { 'Retry-After': '1' } }),
        );
      }
      // A runtime may hand its own second argument (Bun's server, Deno's info): only a string prefix counts.
      const prefix = fetchOptions?.mountPrefix;
      if (typeof prefix === 'string') {
        try {
          setMountPrefix(request, prefix);
        } catch (err) {
          return Promise.reject(err);
        }
      }
      // Tracked so close() lets requests under way finish before the stores close.
      const p = handle(request);
      active++;
      // One reaction per request (not then + finally + a Set entry): this runs on every call.
      p.then(settle, settle);
      return p;
    },
    websocket: createWebSocketHooks(ctx, { maxBufferedBytes: options.maxWebSocketBufferedBytes }),
    sweep: runSweep,
    idle,
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await drained();
      await ctx.jobs.close();
      await closeVideoTasks(ctx);
      await sweeping;
      await idle();
      await metadata.close();
      await blobs.close?.();
    },
  };
}
