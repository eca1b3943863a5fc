// The package's main entry: the core's API, with createService choosing the
// defaults in this one place: the in-process engine with the built-in nodes
// (on worker threads where the runtime has them, within the job memory
// budget), the local music synthesizer and the local video renderer, all
// following the operator's outbound policy. Pass `engine` or `providers` to
// replace them.
import { outboundPolicy } from './core/config.ts';
import { createService as createCoreService } from './core/service.ts';
import type { Service, ServiceOptions } from './core/types.ts';
import { createLocalEngine, type LocalEngineOptions } from './engine/local/engine.ts';
import type { ThreadSpawner } from './engine/local/thread/protocol.ts';
import { webWorkerSpawner } from './engine/local/thread/web.ts';
import { createLocalMusicProvider } from './providers/local/music/provider.ts';
import { createLocalVideoProvider } from './providers/local/video/provider.ts';

export * from './core/index.ts';

export interface DefaultServiceOptions extends ServiceOptions {
  /** For the default engine: its cache, its threads (`threads: false` runs jobs on the calling thread). */
  localEngine?: Pick<LocalEngineOptions, 'cacheSize' | 'cacheBytes' | 'threads' | 'threadCount'>;
}

export async function createService(options: DefaultServiceOptions): Promise<Service> {
  const policy = outboundPolicy(options);
  const engine =
    options.engine ??
    createLocalEngine({
      threads: await defaultThreads(),
      ...options.localEngine,
      settings: { allowPrivateUrls: policy.allowPrivate, resolveHost: policy.resolveHost },
      maxJobMemoryBytes: options.maxJobMemoryBytes,
    });
  return createCoreService({
    ...options,
    engine,
    providers: {
      music: options.providers?.music ?? createLocalMusicProvider(),
      video: options.providers?.video ?? createLocalVideoProvider({ policy }),
    },
  });
}

/** Web Workers where the runtime has them; on Node (no global Worker before 22), worker_threads. */
async function defaultThreads(): Promise<ThreadSpawner | false> {
  const web = webWorkerSpawner();
  if (web) return web;
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  if (node) return (await import('./adapters/node/threads.ts')).nodeThreadSpawner();
  return false;
}
