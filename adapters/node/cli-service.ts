// The service both CLI commands run: the engine (in process or on --worker
// servers), the generation providers and the outbound policy from the flags,
// over the storage cli-storage.ts opened. Also their shared shutdown on
// SIGINT/SIGTERM.
import { createComfyEngine } from '../../engine/comfyui/engine.ts';
import type { Engine } from '../../engine/types.ts';
import { createService, type Service } from '../../index.ts';
import { createUpstreamMusicProvider } from '../../providers/upstream/music.ts';
import { createUpstreamVideoProvider } from '../../providers/upstream/video.ts';
import type { RunnerCliOptions } from './cli-options.ts';
import type { CliStorage } from './cli-storage.ts';
import { createNativeHasher } from './native-hasher.ts';
import { createProcessMetrics } from './process-metrics.ts';
import { resolveHostWithDns } from './resolve-host.ts';

const say = (message: string) => process.stderr.write(`graphrun: ${message}\n`);

function engineFor({ workers, jobLeaseSeconds, pool }: RunnerCliOptions, storage: CliStorage): Engine | undefined {
  if (workers.length > 0) {
    const log = (message: string, detail?: Record<string, unknown>) => say(`${message} ${detail ? JSON.stringify(detail) : ''}`);
    // Other runners on this storage may use the same workers: their slots are claimed in it, and a dead
    // runner's slot outlives its job leases, so the job's re-run still finds the worker holding its prompt.
    const slotLeaseMs = Math.max(60_000, 2 * (jobLeaseSeconds ?? 0) * 1000);
    return createComfyEngine({ workers, log, slots: storage.metadata.workerSlots, slotLeaseMs, ...pool });
  }
  // The built-in engine runs the jobs, under the service's outbound policy (below).
  return undefined;
}

/** What `serve` adds (a runner passes none): its token, its operator token, whether it runs jobs too. */
export interface CliHttp {
  token?: string;
  operatorToken?: string;
  runJobs: boolean;
}

/**
 * `http`: what `serve` adds; with it the process metrics its /metrics shows.
 * `deploymentId`: a deployment of --deployments (options then carry its
 * workers and threads), which cli-deployments.ts logs in one line of its own;
 * undefined: 'default', the deployment the flags configure.
 */
export async function createCliService(storage: CliStorage, options: RunnerCliOptions, http?: CliHttp, deploymentId?: string): Promise<Service> {
  const { allowPrivateUrls, workers, threads, jobLeaseSeconds, musicUpstream, videoUpstream, webhooks } = options;
  // With workers, as many jobs run at once as the pool has slots (one per worker), also for the
  // CLI's one account (open or --token: the store's 'default' tier, otherwise limited to one job).
  const pool = workers.length > 0 ? { maxConcurrentJobs: workers.length, tierLimits: { default: workers.length } } : {};
  const providers = {
    music: musicUpstream ? createUpstreamMusicProvider(musicUpstream) : undefined,
    video: videoUpstream ? createUpstreamVideoProvider(videoUpstream) : undefined,
  };
  const localEngine = threads === undefined ? undefined : { threadCount: threads };
  // One outbound policy for LoadImageFromURL, video key frames and callbacks: the switch, and names resolved with node:dns.
  const service = await createService({
    storage,
    deploymentId,
    token: http?.token,
    operatorToken: http?.operatorToken,
    runJobs: http?.runJobs ?? true,
    metrics: http ? createProcessMetrics() : undefined,
    engine: engineFor(options, storage),
    localEngine,
    jobLeaseSeconds,
    allowPrivateUrls,
    webhooks,
    resolveHost: resolveHostWithDns,
    // Native blake3: uploads run at disk speed instead of hash-wasm's (bench:upload).
    hasher: createNativeHasher,
    ...pool,
    providers,
  });
  // What every deployment shares is said once, for the default one.
  if (deploymentId !== undefined) return service;
  if (musicUpstream) say(`music generation forwarded to ${musicUpstream.baseUrl}`);
  if (videoUpstream) say(`video generation forwarded to ${videoUpstream.baseUrl}`);
  if (webhooks) say(`job events go to ${webhooks.length} webhook endpoint(s): ${webhooks.map((w) => w.url).join(', ')}`);
  if (http?.runJobs === false) say('serving the API only: jobs wait for a "graphrun runner" on the same storage');
  else if (workers.length > 0) say(`running jobs on ${workers.length} worker(s): ${workers.join(', ')}`);
  else if (allowPrivateUrls)
    say('outbound requests (LoadImageFromURL, video key frames, callbacks) may reach private, loopback and link-local addresses');
  return service;
}

/**
 * On SIGINT or SIGTERM: `stop()` (which ends with service.close(): jobs running
 * here are aborted and queued again for the next start), then exit 0.
 */
export function stopOnSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // A second Ctrl-C means "now": do not wait for a slow shutdown.
    if (stopping) process.exit(1);
    stopping = true;
    say(`${signal}, shutting down`);
    stop().then(
      () => process.exit(0),
      (err) => {
        say(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
