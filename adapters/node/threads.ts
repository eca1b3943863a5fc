// Worker threads for the local engine on Node (worker_threads), with a heap
// limit per thread: a job that outgrows it ends that thread with
// ERR_WORKER_OUT_OF_MEMORY, which fails the job, not the process.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ThreadSpawner } from '../../engine/local/thread/protocol.ts';

// The entry has this module's extension: .ts from the sources, .js built, .mjs in a bundle beside it.
const entry = new URL(`./thread-entry${/\.[cm]?[jt]s$/.exec(import.meta.url)?.[0] ?? '.js'}`, import.meta.url);

/**
 * From the sources (tests, development) the entry is TypeScript, which Node
 * 20 cannot load by itself: the thread then registers tsx, a devDependency,
 * before importing it. The built package runs plain JavaScript.
 */
function startWorker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { ...options, eval: true });
}

export function nodeThreadSpawner(): ThreadSpawner {
  return {
    parallelism: availableParallelism(),
    spawn({ heapMb }) {
      const worker = startWorker({ name: 'graphrun-engine', resourceLimits: { maxOldGenerationSizeMb: heapMb } });
      // Idle threads do not hold the process open: a process may end without closing its engine.
      worker.unref();
      let dead = false;
      return {
        post: (message) => worker.postMessage(message),
        listen(on) {
          worker.on('message', on.message);
          const died = (err: { message?: string; code?: string }) => {
            if (dead) return;
            dead = true;
            on.error({ message: err.message ?? String(err), outOfMemory: err.code === 'ERR_WORKER_OUT_OF_MEMORY' });
          };
          worker.on('error', died);
          worker.on('exit', (code) => died({ message: `the thread exited with code ${code}` }));
        },
        hold: (busy) => (busy ? worker.ref() : worker.unref()),
        terminate: () => {
          dead = true;
          void worker.terminate();
        },
      };
    },
  };
}
