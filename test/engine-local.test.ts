// The in-process engine against the shared engine conformance suite: on the
// calling thread, and on worker threads (Node's worker_threads).
import { nodeThreadSpawner } from '../adapters/node/threads.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { engineSuite } from './suites/engine.ts';

engineSuite('local', async () => {
  const engine = createLocalEngine({ threads: false });
  return { engine, cleanup: () => engine.close() };
});

engineSuite('local on worker threads', async () => {
  const engine = createLocalEngine({ threads: nodeThreadSpawner(), threadCount: 2 });
  return { engine, cleanup: () => engine.close() };
});
