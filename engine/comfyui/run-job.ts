// Runs one job on one worker: stages inputs, submits with the job id as the
// prompt id, follows the worker's messages for that prompt (as our events),
// and ends on whichever comes first: the prompt's end on the socket, a
// cross-check through /history and /queue (after a dropped socket, and
// periodically, so no completion is missed), a cancel, the timeout, or the
// worker being unreachable for too long. A node's files are committed when
// its `executed` message arrives, and that event goes out only once they are,
// so it names what we stored; the messages behind it wait, keeping the
// worker's order. At the end the history entry commits what the messages
// missed; when the socket was up from the submit to the end, they missed
// nothing and the history is not asked for (heardAll).
import { isRecord } from '../../lib/is-record.ts';
import { type EngineEvent, type EngineJob, type ExecutionContext, ExecutionError, JobAbort, type OutputAsset, type Workflow } from '../types.ts';
import { createEventOrder } from './event-order.ts';
import { executionErrorOf, JOB_TIMEOUT } from './exception-types.ts';
import { outputsOf, verdictOf } from './history-entry.ts';
import { mapBinary, mapMessage } from './messages.ts';
import { createNodeOutputs } from './node-outputs.ts';
import type { JobListener, PoolWorker } from './pool.ts';
import { stageInputs } from './stage-inputs.ts';
import { WorkerHttpError, WorkerUnreachable } from './worker-client.ts';
import { cancelOnWorker, WorkerLostError } from './worker-lost.ts';

export interface RunJobOptions {
  clientId: string;
  /** Bound on a job's time on the worker; none when absent. */
  jobTimeoutMs?: number;
  /** How long a worker may be unreachable before its job counts as lost. */
  workerLostAfterMs: number;
  /** Cross-check period while the socket is up (it is 1/4 of workerLostAfterMs, at most 1 s, while down). */
  crossCheckMs: number;
  /** How long to wait for the worker's socket before submitting anyway (events would be missed, not the end). */
  socketWaitMs: number;
  /** The job's cancel was sent (a cancel, or the timeout): the worker may hold the prompt a while yet. */
  onCancelSent(): void;
  /** A run again after the job's worker looked lost: the worker may still have the prompt. */
  resume?: boolean;
  /** Outputs earlier runs of this job committed. */
  earlier: readonly OutputAsset[];
  /** Each output this run commits (or finds committed by an earlier run). */
  onCommitted(asset: OutputAsset): void;
}

type End =
  | { kind: 'history'; entry: Record<string, unknown> }
  /** The prompt succeeded and every message of it was heard: nothing for the history to add. */
  | { kind: 'heard' }
  | { kind: 'error'; error: ExecutionError }
  | { kind: 'interrupted'; data: Record<string, unknown> }
  | { kind: 'lost'; why: string }
  | { kind: 'commit-failed'; error: unknown }
  | { kind: 'aborted' }
  | { kind: 'timeout' };

/** The worker's part of the problem (down or 5xx) as opposed to the workflow's. */
const isWorkerFault = (err: unknown) => err instanceof WorkerUnreachable || (err instanceof WorkerHttpError && err.status >= 500);
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** What the worker gets as extra_data: nothing when the client sent none, as a client of the worker would. */
export function forwardExtraData(extra: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!extra) return undefined;
  const { api_key_platform_org: key, ...rest } = extra;
  // The worker's partner nodes read the vendor's name for the key.
  return typeof key === 'string' ? { ...rest, api_key_comfy_org: key } : rest;
}

/** The worker's refusal as the job's error, naming the first node it found at fault. */
export function validationError(body: Record<string, unknown>): ExecutionError {
  const nodes = (body.node_errors ?? {}) as Record<string, { class_type?: unknown }>;
  const first = Object.keys(nodes)[0];
  const classType = first !== undefined && typeof nodes[first]?.class_type === 'string' ? (nodes[first].class_type as string) : null;
  return new ExecutionError(validationMessage(body), 'ValidationError', first ?? null, classType);
}

export function validationMessage(body: Record<string, unknown>): string {
  const error = (body.error ?? {}) as { message?: unknown; details?: unknown };
  const parts = [typeof error.message === 'string' ? error.message : 'The worker refused the workflow'];
  if (typeof error.details === 'string' && error.details) parts.push(error.details);
  const nodes = (body.node_errors ?? {}) as Record<string, { errors?: Array<{ message?: string; details?: string }>; class_type?: string }>;
  for (const [id, n] of Object.entries(nodes)) {
    for (const e of n.errors ?? []) parts.push(`node ${id} (${n.class_type ?? '?'}): ${e.message ?? ''}${e.details ? `: ${e.details}` : ''}`);
  }
  return [...new Set(parts)].join('\n');
}

export async function runJob(worker: PoolWorker, job: EngineJob, ctx: ExecutionContext, opts: RunJobOptions): Promise<void> {
  const { client } = worker;
  const id = job.id;
  const lost = (why: string) => new WorkerLostError(`The worker ${worker.url} was lost: ${why}`, worker.url);
  ctx.signal.throwIfAborted();

  let workflow: Workflow;
  try {
    workflow = await stageInputs(job.workflow, worker.defs ?? {}, ctx, client);
  } catch (err) {
    if (isWorkerFault(err)) throw lost(messageOf(err));
    if (err instanceof WorkerHttpError) throw new ExecutionError(`Staging an input on the worker failed: ${err.message}`, 'WorkerError');
    throw err;
  }

  let end!: (e: End) => void;
  let ended = false;
  const ending = new Promise<End>((resolve) => {
    end = (e) => {
      if (ended) return;
      ended = true;
      resolve(e);
    };
  });
  // Stops this run's file fetches once its result no longer matters (canceled, timed out, worker lost).
  const halt = new AbortController();
  const outputs = createNodeOutputs({
    client,
    ctx,
    // halt follows ctx.signal too (onAbort).
    signal: halt.signal,
    earlier: opts.earlier,
    onCommitted: opts.onCommitted,
  });
  let submitted = false;
  // A small prompt can finish on the socket before the worker's answer to the submit is read.
  let endedBeforeSubmit = false;
  let runningNode: string | null = null;
  const executedSeen = new Set<string>();
  // Every message of the prompt reached us: the socket was up when it was submitted and has not dropped since.
  let heardAll = false;
  let succeeded = false;
  let cachedNodes: string[] = [];
  let unreachableSince: number | null = null;
  let checking = false;
  let successTimer: ReturnType<typeof setTimeout> | undefined;
  let tick: ReturnType<typeof setTimeout> | undefined;

  const stopped = () => halt.signal.aborted || ctx.signal.aborted;
  const order = createEventOrder(stopped, (error) => end({ kind: 'commit-failed', error }));
  // Checked again when the step runs: the listener may have canceled on the event before.
  const emit = (event: EngineEvent) => {
    if (!stopped()) ctx.emit(event);
  };

  async function crossCheck(): Promise<void> {
    if (checking || ended || !submitted) return;
    checking = true;
    try {
      const entry = await client.history(id);
      if (entry) return end({ kind: 'history', entry });
      const q = await client.queue();
      unreachableSince = null;
      if (q.running.includes(id) || q.pending.includes(id)) return;
      // History is written before a prompt leaves the queue: look once more to rule out the race.
      const again = await client.history(id);
      if (again) return end({ kind: 'history', entry: again });
      end({ kind: 'lost', why: 'it no longer knows the job (restarted?)' });
    } catch (err) {
      if (!isWorkerFault(err)) throw err;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince >= opts.workerLostAfterMs) end({ kind: 'lost', why: messageOf(err) });
    } finally {
      checking = false;
    }
  }

  function scheduleTick(): void {
    if (ended) return;
    const up = worker.socket?.connected() ?? false;
    const delay = up && unreachableSince === null ? opts.crossCheckMs : Math.max(20, Math.min(1000, opts.workerLostAfterMs / 4));
    tick = setTimeout(() => {
      crossCheck()
        .catch(() => {})
        .finally(scheduleTick);
    }, delay);
    tick.unref?.();
  }

  const listener: JobListener = {
    onMessage(msg) {
      if (ended || ctx.signal.aborted) return;
      const mapped = mapMessage(msg, workflow);
      if (msg.type === 'executing') runningNode = typeof msg.data.node === 'string' ? msg.data.node : null;
      for (const event of mapped.events) {
        if (event.type === 'cached') cachedNodes = event.node_ids;
        if (event.type === 'executed') {
          executedSeen.add(event.node_id);
          order.push(async () => emit({ ...event, output: await outputs.commit(event.node_id, event.output) }));
        } else {
          order.push(() => emit(event));
        }
      }
      switch (mapped.ending?.kind) {
        case 'success':
          succeeded = true;
          if (!submitted) endedBeforeSubmit = true;
          // The history follows with `executing: null`; if that never comes, look anyway.
          successTimer = setTimeout(() => void crossCheck().catch(() => {}), 250);
          break;
        case 'finished':
          if (!submitted) endedBeforeSubmit = true;
          if (succeeded && heardAll && cachedOutputsHeard()) end({ kind: 'heard' });
          else void crossCheck().catch(() => {});
          break;
        case 'error':
          end({ kind: 'error', error: executionErrorOf(mapped.ending.data) });
          break;
        case 'interrupted':
          end({ kind: 'interrupted', data: mapped.ending.data });
          break;
      }
    },
    onBinary(frame) {
      if (ended || ctx.signal.aborted) return;
      const event = mapBinary(frame, runningNode);
      if (event) order.push(() => emit(event));
    },
    onSocketDown() {
      heardAll = false;
      clearTimeout(tick);
      scheduleTick();
    },
    onSocketUp() {
      void crossCheck().catch(() => {});
    },
  };

  /**
   * Whether each cached output node was reported `executed`. Engine servers
   * before 2024's execution model send no `executed` for a cached node; only
   * their history lists its files.
   */
  function cachedOutputsHeard(): boolean {
    return cachedNodes.every((node) => executedSeen.has(node) || worker.defs?.[workflow[node]?.class_type ?? '']?.output_node === false);
  }

  let timedOut = false;
  const timeoutError = () => new ExecutionError(`The job did not finish on the worker within ${opts.jobTimeoutMs} ms.`, JOB_TIMEOUT);
  /** A commit that failed: cut short by a cancel or the timeout, the worker's fault (lost), its refusal (WorkerError), or ours. */
  function commitFailure(err: unknown): unknown {
    if (ctx.signal.aborted) return ctx.signal.reason;
    if (timedOut) return timeoutError();
    if (isWorkerFault(err)) return lost(messageOf(err));
    if (err instanceof WorkerHttpError) return new ExecutionError(`Fetching an output from the worker failed: ${err.message}`, 'WorkerError');
    return err;
  }
  /** The prompt may still run on the worker: ask it to stop, and keep the worker from new jobs until it has. */
  function cancelPrompt(): void {
    void cancelOnWorker(client, id).catch(() => {});
    opts.onCancelSent();
  }

  const onAbort = () => {
    // Before the end is seen: the file fetches stop with the job's own reason.
    halt.abort(ctx.signal.reason);
    end({ kind: 'aborted' });
  };
  const unlisten = worker.listen(id, listener);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const timeout = opts.jobTimeoutMs
    ? setTimeout(() => {
        timedOut = true;
        // Also while the end is being collected: a file the worker never finishes sending must not hold the job.
        halt.abort(new Error('the job timed out'));
        end({ kind: 'timeout' });
      }, opts.jobTimeoutMs)
    : undefined;
  try {
    // Submitting before the socket is up would miss the first messages (not the end: cross-checks catch that).
    await worker.socket?.whenConnected(opts.socketWaitMs);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const extra_data = forwardExtraData(job.extra_data);
    const payload = { prompt: workflow, client_id: opts.clientId, prompt_id: id, ...(extra_data ? { extra_data } : {}) };
    let res;
    try {
      // A worker that was only cut off still runs (or ran) the prompt: follow that run rather than start a second.
      // The queue first: a prompt's history is written before it leaves the queue, so one ending in between is not missed.
      const known = opts.resume && (Object.values(await client.queue()).some((ids) => ids.includes(id)) || (await client.history(id)) !== null);
      // A run followed from the middle has missed the messages before.
      heardAll = !known && worker.socket?.connected() === true;
      res = known ? null : await client.submit(payload);
    } catch (err) {
      if (isWorkerFault(err)) throw lost(messageOf(err));
      throw err;
    }
    if (res && !res.ok) throw validationError(res.body);
    submitted = true;
    scheduleTick();
    if (!res || endedBeforeSubmit) void crossCheck().catch(() => {});

    const result = await ending;
    if (result.kind === 'aborted' || result.kind === 'timeout' || result.kind === 'lost') halt.abort(new Error(`the run ended: ${result.kind}`));
    // Nodes that finished before the end keep their files (a failed job shows what it made), and their events go out first.
    await order.drained();
    // A cancel that came while those went out (after the worker's end, before ours) still wins.
    if ((result.kind === 'heard' || result.kind === 'history') && ctx.signal.aborted) throw ctx.signal.reason;
    switch (result.kind) {
      case 'aborted':
        // A shutdown leaves the prompt running: the next start finds it on the worker and follows it to its end.
        if (!(ctx.signal.reason instanceof JobAbort && ctx.signal.reason.kind === 'shutdown')) cancelPrompt();
        throw ctx.signal.reason;
      case 'timeout':
        cancelPrompt();
        throw timeoutError();
      case 'error':
        throw result.error;
      case 'interrupted':
        throw interruptedError(result.data, workflow);
      case 'lost':
        throw lost(result.why);
      case 'commit-failed':
        // The prompt runs on, for nothing now.
        cancelPrompt();
        throw commitFailure(result.error);
      case 'heard': {
        const failed = order.failure();
        if (failed) throw commitFailure(failed.error);
        return;
      }
      case 'history': {
        const verdict = verdictOf(result.entry);
        if (verdict.kind === 'error') throw verdict.error;
        if (verdict.kind === 'interrupted') throw interruptedError(verdict.data, workflow);
        const failed = order.failure();
        if (failed) throw commitFailure(failed.error);
        // Messages missed while the socket was down: the history still says what each output node showed.
        for (const [node_id, ui] of Object.entries(outputsOf(result.entry))) {
          if (!isRecord(ui)) continue;
          let named;
          try {
            named = await outputs.commit(node_id, ui);
          } catch (err) {
            throw commitFailure(err);
          }
          if (!executedSeen.has(node_id)) ctx.emit({ type: 'executed', node_id, output: named });
        }
        return;
      }
    }
  } finally {
    ended = true;
    halt.abort(new Error('the run ended'));
    unlisten();
    ctx.signal.removeEventListener('abort', onAbort);
    clearTimeout(timeout);
    clearTimeout(tick);
    clearTimeout(successTimer);
  }
}

function interruptedError(data: Record<string, unknown>, workflow: Record<string, { class_type: string }>): ExecutionError {
  const node = typeof data.node_id === 'string' ? data.node_id : null;
  return new ExecutionError('The job was interrupted on the worker.', 'InterruptedError', node, node ? (workflow[node]?.class_type ?? null) : null);
}
