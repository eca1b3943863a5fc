// Worker threads through the Web Worker API, where the runtime has it (Bun,
// Deno, browsers). Node has no global Worker before version 22; there the
// Node adapter's spawner (worker_threads) is used instead.
import type { FromThread, ThreadSpawner } from './protocol.ts';

interface WebWorker {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: { data: FromThread }) => void): void;
  addEventListener(type: 'error' | 'messageerror', listener: (event: { message?: string; preventDefault?(): void }) => void): void;
  terminate(): void;
}
type WorkerConstructor = new (url: URL, options: { type: 'module'; name?: string }) => WebWorker;

// The entry has this module's extension: .ts from the sources (Bun, Deno, tests), .js built.
const extension = /\.[cm]?[jt]s$/.exec(import.meta.url)?.[0] ?? '.js';

/** A spawner over the global Worker, or null when the runtime has none. */
export function webWorkerSpawner(): ThreadSpawner | null {
  const Worker = (globalThis as { Worker?: WorkerConstructor }).Worker;
  if (typeof Worker !== 'function') return null;
  const entry = new URL(`./web-entry${extension}`, import.meta.url);
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return {
    parallelism: Math.max(1, cores ?? 1),
    // Web Workers have no heap limit to set: the job's budget checks are what bounds them.
    spawn: () => {
      const worker = new Worker(entry, { type: 'module', name: 'graphrun-engine' });
      let dead = false;
      return {
        post: (message) => worker.postMessage(message),
        listen(on) {
          worker.addEventListener('message', (event) => on.message(event.data));
          const died = (event: { message?: string; preventDefault?(): void }) => {
            event.preventDefault?.();
            if (dead) return;
            dead = true;
            worker.terminate();
            on.error({ message: event.message || 'the worker failed', outOfMemory: /out of memory/i.test(event.message ?? '') });
          };
          worker.addEventListener('error', died);
          worker.addEventListener('messageerror', died);
        },
        terminate: () => {
          dead = true;
          worker.terminate();
        },
      };
    },
  };
}
