// The package's main entry: the core's API, with createService choosing the
// defaults in this one place: the in-process engine with the built-in nodes,
// the local music synthesizer and the local video renderer, all following
// the operator's outbound policy (and the engine its memory budget). Pass
// `engine` or `providers` to replace them.
import { outboundPolicy } from './core/config.ts';
import { createService as createCoreService } from './core/service.ts';
import type { Service, ServiceOptions } from './core/types.ts';
import { createLocalEngine } from './engine/local/engine.ts';
import { createLocalMusicProvider } from './providers/local/music/provider.ts';
import { createLocalVideoProvider } from './providers/local/video/provider.ts';

export * from './core/index.ts';

export async function createService(options: ServiceOptions): Promise<Service> {
  const policy = outboundPolicy(options);
  return createCoreService({
    ...options,
    engine:
      options.engine ??
      createLocalEngine({
        settings: { allowPrivateUrls: policy.allowPrivate, resolveHost: policy.resolveHost },
        maxJobMemoryBytes: options.maxJobMemoryBytes,
      }),
    providers: {
      music: options.providers?.music ?? createLocalMusicProvider(),
      video: options.providers?.video ?? createLocalVideoProvider({ policy }),
    },
  });
}
