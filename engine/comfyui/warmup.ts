// The warm-up: an operator's workflow (API format) run on an engine server
// when it comes up or back, before it takes a job, so the models its loaders
// name are in memory when the first job arrives. It is submitted like a job's
// prompt, but nothing of it is kept: its end (the socket's message, or its
// history entry, polled in case the socket is not up yet) is all we wait for.
// It claims no shared slot (worker-slots.ts): a prompt another runner sends
// meanwhile queues behind it on the server, and the slot counts of jobs stay
// exact.
import type { Workflow } from '../types.ts';
import { verdictOf } from './history-entry.ts';
import type { PoolWorker } from './pool.ts';

export interface WarmUpOptions {
  clientId: string;
  /** How often its history is asked while no end came on the socket. */
  pollMs: number;
  /** Bound on the whole warm-up (a server that hangs on it must still join). */
  timeoutMs: number;
}

const ENDS = ['execution_success', 'execution_error', 'execution_interrupted'];

/** Runs the workflow on the worker; resolves when it succeeded, rejects with why it did not. */
export async function warmUp(worker: PoolWorker, workflow: Workflow, opts: WarmUpOptions): Promise<void> {
  const id = `warmup-${crypto.randomUUID()}`;
  let poke = () => {};
  const unlisten = worker.listen(id, {
    onMessage: (msg) => {
      if (ENDS.includes(msg.type) || (msg.type === 'executing' && msg.data.node == null)) poke();
    },
    onBinary: () => {},
    onSocketDown: () => {},
    onSocketUp: () => poke(),
  });
  const until = Date.now() + opts.timeoutMs;
  try {
    const res = await worker.client.submit({ prompt: workflow, client_id: opts.clientId, prompt_id: id });
    if (!res.ok) throw new Error(`the worker refused the warm-up workflow (${res.status}): ${JSON.stringify(res.body).slice(0, 500)}`);
    for (;;) {
      if (worker.gone.aborted) throw new Error('the worker left the pool');
      const entry = await worker.client.history(id);
      if (entry) {
        const verdict = verdictOf(entry);
        if (verdict.kind === 'error') throw new Error(`the warm-up workflow failed: ${verdict.error.message}`);
        if (verdict.kind === 'interrupted') throw new Error('the warm-up workflow was interrupted');
        return;
      }
      if (Date.now() >= until) throw new Error(`the warm-up did not finish within ${opts.timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(opts.pollMs, Math.max(0, until - Date.now())));
        poke = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  } finally {
    unlisten();
  }
}
