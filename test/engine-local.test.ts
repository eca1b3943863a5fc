// The in-process engine against the shared engine conformance suite.
import { createLocalEngine } from '../engine/local/engine.ts';
import { engineSuite } from './suites/engine.ts';

engineSuite('local', async () => {
  const engine = createLocalEngine();
  return { engine, cleanup: () => engine.close() };
});
