// `Hold`: a test node that waits at a gate the test opens by key (a cancel
// ends the wait), so a test lets a job go on when it is ready instead of
// hoping the job is slower than the test.
import { defineNode } from '../../engine/local/define-node.ts';

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export interface Gates {
  /** Resolves once the Hold node with this key waits at its gate (its job is running). */
  reached(key: string): Promise<void>;
  /** Lets the Hold node with this key go on, whether it already waits or not. */
  open(key: string): void;
}

export function createGates(): Gates & { entry(key: string): { reached: Deferred; opened: Deferred } } {
  const entries = new Map<string, { reached: Deferred; opened: Deferred }>();
  const entry = (key: string) => {
    let e = entries.get(key);
    if (!e) entries.set(key, (e = { reached: deferred(), opened: deferred() }));
    return e;
  };
  return { entry, reached: (key) => entry(key).reached.promise, open: (key) => entry(key).opened.resolve() };
}

/** Waits for the test to open its gate (a cancel ends the wait), then reports `steps` progress steps and passes `value` on. */
export const holdNode = (gates: ReturnType<typeof createGates>) =>
  defineNode({
    name: 'Hold',
    category: 'test',
    cacheable: false,
    required: { key: ['STRING', {}], value: ['INT', { min: 0, max: 16384 }], steps: ['INT', { default: 0, min: 0, max: 100 }] },
    outputs: [{ type: 'INT' }],
    run: async ({ key, value, steps }, ctx) => {
      const gate = gates.entry(String(key));
      gate.reached.resolve();
      await new Promise<void>((resolve, reject) => {
        if (ctx.signal.aborted) return reject(ctx.signal.reason);
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        gate.opened.promise.then(resolve);
      });
      for (let i = 1; i <= (steps as number); i++) ctx.progress(i, steps as number);
      return { outputs: [value] };
    },
  });
