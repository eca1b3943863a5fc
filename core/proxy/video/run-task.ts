// Drives one video task from where its row stands to success or failed:
// creates it at the provider (retrying what may pass), polls the provider's
// state, stores the video as an asset of the caller's account, and moves the
// row with compare-and-set writes, reporting each change. A task the service
// stops in the middle (signal aborted) keeps its row as it is: the next
// start resumes it.

import { pause } from '../../../lib/pause.ts';
import { type ProviderTaskState, type ProviderVideo, type VideoProvider, VideoProviderError, type VideoRequest } from '../../../providers/video.ts';
import type { NewWebhookDelivery, VideoTaskPatch, VideoTaskRecord } from '../../../storage/types.ts';
import { mintOwnBytes, stageBlob } from '../../assets/ingest.ts';
import type { ServiceBase } from '../../context.ts';
import { videoErrorBody } from './errors.ts';
import type { TaskState } from './states.ts';

/** What a failed task says; the provider's own words go to the log. */
export const TASK_FAILED = 'The video could not be generated.';
const CREATE_ATTEMPTS = 3;
/** Status calls that may fail in a row before the task is given up. */
const STATUS_ATTEMPTS = 5;
const RETRY_DELAY_MS = 1000;

export interface TaskRunDeps {
  ctx: ServiceBase;
  provider: VideoProvider;
  /** Aborted when the service closes. */
  signal: AbortSignal;
  /** The deliveries announcing a state change (its callback), built before it commits, with the task as it will be. */
  announce(task: VideoTaskRecord): Promise<NewWebhookDelivery[]>;
  /** Called after a committed state change that wrote deliveries. */
  announced(): void;
  /** A task still open this long after creation fails. */
  maxTaskMs: number;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function* chunks(body: ProviderVideo['body']): AsyncIterable<Uint8Array> {
  if (body instanceof Uint8Array) yield body;
  else yield* body;
}

export async function runVideoTask(deps: TaskRunDeps, initial: VideoTaskRecord): Promise<void> {
  const { ctx, provider, signal } = deps;
  const retryDelay = (n: number) => (provider.retryDelayMs ?? RETRY_DELAY_MS) * 2 ** (n - 1);
  let task = initial;
  const { callback_url: _callback, ...request } = task.request as unknown as VideoRequest & { callback_url?: string };

  /** Moves the row from the state this run last saw; false when another writer moved it first. */
  async function move(to: TaskState, patch: Omit<VideoTaskPatch, 'updated_at'> = {}): Promise<boolean> {
    const updated_at = ctx.now();
    const next = { ...task, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), state: to, updated_at };
    // Every new state is announced, in the change's own transaction.
    const outbox = to !== task.state ? await deps.announce(next) : [];
    if (!(await ctx.metadata.transitionVideoTask(task.id, task.state, to, { ...patch, updated_at, outbox }))) {
      ctx.logger.warn('video task moved by another writer; this run stops', { task_id: task.id, expected: task.state, to });
      return false;
    }
    task = next;
    if (outbox.length > 0) deps.announced();
    return true;
  }

  async function fail(reason: string, details: string[] = []): Promise<void> {
    ctx.logger.warn('video task failed', { task_id: task.id, provider: provider.name, reason });
    await move('failed', { error: videoErrorBody(TASK_FAILED, details) });
  }

  /** The provider's id for a new generation, or null when the task failed instead. */
  async function create(): Promise<string | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await provider.create(request, signal)).id;
      } catch (err) {
        if (signal.aborted) throw err;
        const retryable = err instanceof VideoProviderError && err.retryable;
        if (!retryable || attempt >= CREATE_ATTEMPTS) {
          await fail(`the provider could not create the task: ${message(err)}`);
          return null;
        }
        await pause(retryDelay(attempt), signal);
      }
    }
  }

  async function storeOutput(video: ProviderVideo) {
    const staged = await stageBlob(ctx, chunks(video.body));
    const { asset } = await mintOwnBytes(ctx, staged, {
      account_id: task.account_id,
      content_type: video.content_type,
      file_path: `videogen-${task.id}.${video.extension}`,
      tags: ['output', 'videogen'],
      // Kept exactly as long as the task that shows it (mintOwnBytes).
      expires_at: task.expires_at,
      job_id: null,
      node_id: null,
      output_type: 'video',
    });
    return asset;
  }

  if (task.state === 'created' || task.provider_task_id === null) {
    const id = await create();
    if (id === null) return;
    if (!(await move(task.state === 'created' ? 'queueing' : (task.state as TaskState), { provider_task_id: id }))) return;
  }

  let statusFailures = 0;
  for (;;) {
    if (ctx.now() - task.created_at > deps.maxTaskMs) return fail(`still ${task.state} after ${deps.maxTaskMs} ms`);
    let st: ProviderTaskState;
    try {
      st = await provider.status(task.provider_task_id!, signal);
      statusFailures = 0;
    } catch (err) {
      if (signal.aborted) throw err;
      const retryable = err instanceof VideoProviderError && err.retryable;
      if (!retryable || ++statusFailures >= STATUS_ATTEMPTS) return fail(`the provider could not report the task: ${message(err)}`);
      await pause(retryDelay(statusFailures), signal);
      continue;
    }
    switch (st.state) {
      case 'queueing':
        break;
      case 'processing':
        if (task.state === 'queueing' && !(await move('processing'))) return;
        break;
      case 'unknown': {
        // Its render was lost (a restart of an in-process provider): start it again.
        const id = await create();
        if (id === null || !(await move(task.state as TaskState, { provider_task_id: id }))) return;
        break;
      }
      case 'failed':
        return fail(st.reason, st.details);
      case 'success': {
        // Every state is announced, also one a fast render passed between two polls.
        if (task.state === 'queueing' && !(await move('processing'))) return;
        let assetId: string;
        try {
          assetId = (await storeOutput(st.video)).id;
        } catch (err) {
          if (signal.aborted) throw err;
          return fail(`the video could not be stored: ${message(err)}`);
        }
        await move('success', { output_asset_id: assetId });
        return;
      }
    }
    await pause(provider.pollIntervalMs, signal);
  }
}
