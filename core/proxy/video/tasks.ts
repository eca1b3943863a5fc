// The video tasks of one service: started when accepted, resumed at start
// when a restart left them open, each run in the background with its
// callbacks; close() stops them where they stand (their rows stay open for
// the next start). Tasks run on the instance that accepted or resumed them.
import type { VideoTaskRecord } from '../../../storage/types.ts';
import type { ServiceContext } from '../../context.ts';
import { outboundPolicy } from '../../outbound.ts';
import { createCallbackSender, DEFAULT_CALLBACK_OPTIONS } from './callbacks.ts';
import { closeLocalVideoProvider, videoProviderOf } from './provider.ts';
import { taskView } from './record.ts';
import { runVideoTask } from './run-task.ts';
import { OPEN_STATES } from './states.ts';
import { errorText } from '../../log.ts';

/** A task still open this long after it was created has failed. */
const MAX_TASK_MS = 2 * 3600_000;
const RESUME_BATCH = 1000;

export interface VideoTaskSystem {
  /** Runs the task in the background (no-op when it already runs here). */
  accept(task: VideoTaskRecord): void;
  close(): Promise<void>;
}

const systems = new WeakMap<ServiceContext, VideoTaskSystem>();

function createVideoTaskSystem(ctx: ServiceContext): VideoTaskSystem {
  const stopping = new AbortController();
  const running = new Map<string, Promise<void>>();
  const callbacks = createCallbackSender({
    policy: outboundPolicy(ctx),
    logger: ctx.logger,
    options: { ...DEFAULT_CALLBACK_OPTIONS, ...ctx.options?.videoCallbacks },
    signal: stopping.signal,
  });

  const changed = (task: VideoTaskRecord) => {
    const url = task.request.callback_url;
    if (typeof url === 'string') callbacks.send(task.id, url, task.state, () => taskView(ctx, task, task.link_base));
  };

  return {
    accept(task) {
      if (stopping.signal.aborted || running.has(task.id)) return;
      const deps = { ctx, provider: videoProviderOf(ctx), signal: stopping.signal, changed, maxTaskMs: MAX_TASK_MS };
      // A later task: the request that accepted the task is answered first.
      const run = new Promise((resolve) => setTimeout(resolve, 0))
        .then(() => runVideoTask(deps, task))
        .catch((err: unknown) => {
          if (!stopping.signal.aborted) ctx.logger.error('video task run failed', { task_id: task.id, error: errorText(err) });
        })
        .finally(() => running.delete(task.id));
      running.set(task.id, run);
    },
    async close() {
      stopping.abort(new DOMException('The service is closing.', 'AbortError'));
      closeLocalVideoProvider(ctx);
      await Promise.all([...running.values()]);
      await callbacks.idle();
    },
  };
}

/** The service's task system (made on first use). */
export function videoTasks(ctx: ServiceContext): VideoTaskSystem {
  let system = systems.get(ctx);
  if (!system) systems.set(ctx, (system = createVideoTaskSystem(ctx)));
  return system;
}

/** Resumes the tasks a stop or crash left open. */
export async function startVideoTasks(ctx: ServiceContext): Promise<void> {
  const system = videoTasks(ctx);
  for (const task of await ctx.metadata.listVideoTasksByState(OPEN_STATES, RESUME_BATCH)) system.accept(task);
}

export async function closeVideoTasks(ctx: ServiceContext): Promise<void> {
  await systems.get(ctx)?.close();
  systems.delete(ctx);
}
