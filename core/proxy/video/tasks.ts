// The video tasks of one service: started when accepted, resumed at start
// when a restart left them open, each run in the background with its
// callbacks; close() stops them where they stand (their rows stay open for
// the next start). Tasks run on the instance that accepted or resumed them;
// their callbacks wait in the outbox for whichever instance sends them.
import type { VideoTaskRecord } from '../../../storage/types.ts';
import type { ServiceBase } from '../../context.ts';
import { errorText } from '../../log.ts';
import { callbackDeliveries } from './callbacks.ts';
import { runVideoTask } from './run-task.ts';
import { OPEN_STATES } from './states.ts';

/** A task still open this long after it was created has failed. */
const MAX_TASK_MS = 2 * 3600_000;
const RESUME_BATCH = 1000;

export interface VideoTaskSystem {
  /** Runs the task in the background (no-op when it already runs here). */
  accept(task: VideoTaskRecord): void;
  /** Resumes the tasks a stop or crash left open. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createVideoTaskSystem(ctx: ServiceBase): VideoTaskSystem {
  const stopping = new AbortController();
  const running = new Map<string, Promise<void>>();
  // Callbacks go through the outbox (callbacks.ts): its sender delivers them, also after a restart.
  const announce = (task: VideoTaskRecord) => callbackDeliveries(ctx, task);
  const announced = () => ctx.webhooks.wake();

  const system: VideoTaskSystem = {
    accept(task) {
      if (stopping.signal.aborted || running.has(task.id)) return;
      const deps = { ctx, provider: ctx.providers.video, signal: stopping.signal, announce, announced, maxTaskMs: MAX_TASK_MS };
      // A later task: the request that accepted the task is answered first.
      const run = new Promise((resolve) => setTimeout(resolve, 0))
        .then(() => runVideoTask(deps, task))
        .catch((err: unknown) => {
          if (!stopping.signal.aborted) ctx.logger.error('video task run failed', { task_id: task.id, error: errorText(err) });
        })
        .finally(() => running.delete(task.id));
      running.set(task.id, run);
    },
    async start() {
      for (const task of await ctx.metadata.listVideoTasksByState(OPEN_STATES, RESUME_BATCH)) system.accept(task);
    },
    async close() {
      stopping.abort(new DOMException('The service is closing.', 'AbortError'));
      await Promise.all([...running.values()]);
    },
  };
  return system;
}
