// Runs one job the scheduler moved to `running`: takes its workflow (as the
// claim read it; read here when not given), hands it to the engine with an
// ExecutionContext, folds the engine's events into throttled progress
// snapshots (row + live streams), commits outputs as they come, and ends the
// row in its terminal status with a compare-and-set. A job aborted because
// this instance is shutting down goes back to the queue instead.
//
// The run holds the job under the lease its claim took: it renews the lease
// as it polls for a cancel, and every write it makes (progress, outputs, the
// end) carries the lease's token. A run that finds its lease gone (this
// process stalled past it, and another runner took the job back) stops
// writing and leaves the job to whoever holds it now.
import { type Engine, type ExecutionContext, ExecutionError, JobAbort } from '../../engine/types.ts';
import { toBase64 } from '../../lib/base64.ts';
import { pause } from '../../lib/pause.ts';
import { type JobPatch, type JobSummary, LeaseLostError } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';
import { errorText } from '../log.ts';
import { partnerServices } from '../proxy/partner.ts';
import type { AccountEvent, JobHub, PreviewPayload } from './hub.ts';
import { EXPIRED_ERROR, INTERRUPTED_ERROR, jobError } from './job-errors.ts';
import { commitJobOutput, type RunOutputs, readJobAsset, toOutputAsset } from './outputs.ts';
import { createProgressTracker, type Progress, type ProgressTracker } from './progress.ts';
import { createReuseTracker } from './reuse.ts';
import type { Ending } from './scheduler.ts';
import { transition } from './state-machine.ts';
import { createThrottle } from './throttle.ts';
import { scrubTraceback } from './traceback.ts';
import { countNodesToRun, resolveAssetRefs } from './workflow-check.ts';
import { jobWorkflow } from './workflows.ts';

export interface RunnerDeps {
  ctx: ServiceBase;
  engine: Engine;
  hub: JobHub;
  /** Jobs running on this instance, for cancel and shutdown. */
  active: Map<string, AbortController>;
  /** The latest progress each run here published, for the views this instance answers. */
  progress: Map<string, Progress>;
  /** Per-job extra_data, held in memory only (it can carry a credential). */
  extraData: Map<string, Record<string, unknown>>;
  progressIntervalMs: number;
  /** How often a running job's lease is renewed, which also notices a cancel made on another instance. */
  cancelPollMs: number;
  /** How long a renewal extends the lease, ms (several renewals fit in it). */
  leaseMs: number;
  /** What a run cut short by shutdown becomes: queued again, or failed as interrupted. */
  interruptedJobs: 'rerun' | 'fail';
  /** Aborted when the service closes: stops retrying writes that keep failing. */
  stopping: AbortSignal;
}

type Outcome =
  | { kind: 'succeeded' }
  | { kind: 'expired' }
  | { kind: 'canceled' }
  | { kind: 'shutdown' }
  /** The lease was taken back: the job is another runner's now, and nothing more is written. */
  | { kind: 'lost' }
  | { kind: 'failed'; error: Record<string, unknown> };

/** What a run leaves on its row besides its status: written with the status it ends in. */
type RunRecord = Required<Pick<JobPatch, 'outputs_reused' | 'cached_nodes' | 'temp_asset_ids'>>;

const INTERNAL_ERROR = 'The job failed because of an internal error.';
/** A run's end written at once: without a scheduler's `ending`, or after its first try. */
const straight: Ending = (write) => write();
/**
 * Retries a storage write with backoff until it succeeds or the service
 * stops: giving up on a terminal write would leave the row `running`, holding
 * the account's slot and keeping its streams open, and a restart would run
 * the finished job again.
 */
export async function retryWrite<T>(write: () => Promise<T>, stopping: AbortSignal, onError: (err: unknown) => void): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      onError(err);
      if (stopping.aborted) throw err;
      const delay = Math.min(50 * 2 ** attempt, 5000);
      // Shutdown cuts the wait short for one last try, whose failure is then thrown above.
      await pause(delay, stopping).catch(() => {});
    }
  }
}

function errorRecord(err: ExecutionError): Record<string, unknown> {
  return {
    // A refusal at validation is the workflow's fault even when it names the node at fault.
    code: err.exception_type === 'ValidationError' ? 'invalid_workflow' : err.node_id !== null ? 'node_execution_error' : 'execution_error',
    message: err.message,
    exception_type: err.exception_type,
    node_id: err.node_id,
    class_type: err.class_type,
    traceback: scrubTraceback(err.traceback),
  };
}

export function createJobRunner(deps: RunnerDeps): (job: JobSummary, ending?: Ending, workflow?: Record<string, unknown>) => Promise<void> {
  const { ctx, engine, hub, active, extraData } = deps;
  const published = deps.progress;
  const log = (message: string, job: JobSummary, err: unknown) => ctx.logger.error(message, { job_id: job.id, error: errorText(err) });

  /**
   * Ends the row; returns the row as its end wrote it, status and error
   * included (null when another writer moved it first). Every end of a run
   * carries `ran`, outputs_reused included: the last progress save may not
   * have landed (throttled, canceled).
   */
  async function settle(job: JobSummary, outcome: Outcome, tracker: ProgressTracker, ran: RunRecord, ending: Ending): Promise<JobSummary | null> {
    if (outcome.kind === 'lost') {
      ctx.logger.warn('job lease lost: the run ended without writing; another runner holds the job now', { job_id: job.id });
      return null;
    }
    const now = ctx.now();
    // Every end releases the lease; the token guards that this run still holds it.
    const end = { ...ran, lease: null };
    const guard = job.lease ? { lease_token: job.lease.token } : {};
    // Tried in order: the row is `running`, or `canceling` if a cancel came in meanwhile.
    const moves: Array<[from: 'running' | 'canceling', to: string, patch: Record<string, unknown>]> = [];
    switch (outcome.kind) {
      case 'succeeded': {
        const patch = { completed_at: now, progress: { ...tracker.finish() }, ...end };
        moves.push(['running', transition('running', 'succeed'), patch], ['canceling', transition('canceling', 'succeed'), patch]);
        break;
      }
      case 'failed': {
        const patch = { completed_at: now, progress: { ...tracker.snapshot() }, error: outcome.error, ...end };
        moves.push(['running', transition('running', 'fail'), patch], ['canceling', transition('canceling', 'fail'), patch]);
        break;
      }
      case 'canceled':
        moves.push(['canceling', transition('canceling', 'canceled'), { completed_at: now, progress: { ...tracker.snapshot() }, ...end }]);
        break;
      case 'expired':
        moves.push(['running', transition('running', 'fail'), { completed_at: now, error: EXPIRED_ERROR, lease: null }]);
        break;
      case 'shutdown':
        // Its work is lost with this process: it runs again from the start, or fails if the operator said so.
        moves.push(
          deps.interruptedJobs === 'rerun'
            ? ['running', transition('running', 'requeue'), { started_at: null, progress: null, outputs_reused: false, lease: null }]
            : [
                'running',
                transition('running', 'fail'),
                { completed_at: now, progress: { ...tracker.snapshot() }, error: INTERRUPTED_ERROR, ...end },
              ],
          ['canceling', transition('canceling', 'canceled'), { completed_at: now, progress: { ...tracker.snapshot() }, ...end }],
        );
        break;
    }
    // The first try goes through `ending`, which frees the job's slot and may queue the write
    // just ahead of the claims that fill it; a retry, or the next move, goes straight.
    let via = ending;
    for (const [from, to, patch] of moves) {
      const moved = await retryWrite(
        () => {
          const write = via;
          via = straight;
          return write(() => ctx.metadata.transitionJob(job.id, from, to, patch, guard));
        },
        deps.stopping,
        (err) => log('terminal job write failed; retrying', job, err),
      );
      if (moved) return moved;
    }
    ctx.logger.warn('job row moved by another writer before the run ended', { job_id: job.id, outcome: outcome.kind });
    return null;
  }

  return async function run(job: JobSummary, ending: Ending = straight, claimed?: Record<string, unknown>): Promise<void> {
    const controller = new AbortController();
    active.set(job.id, controller);
    ctx.metrics.jobStarted(job);
    hub.announce(job, 'running');
    const live = (event: AccountEvent) => hub.publishAccount(job.account_id, event);
    let tracker = createProgressTracker(0);
    const reuse = createReuseTracker();
    /** The run's temporary files (previews), which history lists beside its outputs. */
    const temps = new Set<string>();
    const runOutputs: RunOutputs = {};
    let outcome: Outcome;
    let saving: Promise<void> = Promise.resolve();
    // The row's progress is saved one window into the run at the earliest: a job that ends
    // sooner writes its progress once, with its end, instead of once more on the way (an
    // UPDATE and a commit of its own: about 60 µs of a trivial job's 1.1 ms of CPU on SQLite,
    // bench:jobs part 1). Views this instance answers meanwhile take what was published
    // (`published`); other instances read the row.
    const saves = createThrottle<Progress>(
      (p) => {
        const reused = reuse.reused;
        // Serialised, so an older snapshot can never land after a newer one.
        saving = saving
          .then(() => ctx.metadata.saveProgress(job.id, { ...p }, reused, job.lease?.token))
          .catch((err) => log('progress save failed', job, err));
      },
      { intervalMs: deps.progressIntervalMs, startClosed: true },
    );
    const progress = createThrottle<Progress>(
      (p) => {
        saves.push(p);
        published.set(job.id, p);
        hub.publish(job.id, { type: 'progress', progress: { ...p } });
      },
      { intervalMs: deps.progressIntervalMs },
    );
    const previews = createThrottle<PreviewPayload>((preview) => hub.publish(job.id, { type: 'preview', preview }), {
      intervalMs: deps.progressIntervalMs,
    });
    let lost = false;
    const lease = job.lease;
    // Renewing the lease also says the job's status: a cancel made on another instance shows as `canceling`.
    const statusNow = lease
      ? () => ctx.metadata.renewLease(job.id, lease.token, ctx.now() + deps.leaseMs)
      : () => ctx.metadata.getJobById(job.id).then((row) => row?.status);
    const poll = setInterval(
      () => {
        statusNow()
          .then((status) => {
            if (controller.signal.aborted || status === undefined) return;
            if (status === null) {
              // Taken back by another runner: leave its run alone (as at shutdown) and write nothing more.
              lost = true;
              ctx.logger.warn('job lease lost; leaving the job to the runner that took it back', { job_id: job.id });
              controller.abort(new JobAbort('shutdown'));
            } else if (status !== 'running') controller.abort(new JobAbort('cancel'));
          })
          .catch((err) => log('lease renewal failed', job, err));
      },
      Math.min(deps.cancelPollMs, Math.max(1, Math.floor(deps.leaseMs / 3))),
    );
    (poll as { unref?: () => void }).unref?.();

    try {
      // Still queued when its retention ran out: nobody can see it any more, so it must not run.
      if (job.expires_at <= ctx.now()) throw EXPIRED;
      // As the claim read it, or (a run not started by a claim) read now.
      const stored = claimed ?? (await jobWorkflow(ctx.metadata, job));
      if (!stored) throw new Error(`job ${job.id} has no workflow row`);
      const workflow = resolveAssetRefs(stored);
      const defs = await engine.nodeDefinitions();
      const outputs = Object.keys(workflow).filter((id) => defs[workflow[id]?.class_type]?.output_node);
      tracker = createProgressTracker(countNodesToRun(workflow, outputs));
      const execution: ExecutionContext = {
        signal: controller.signal,
        emit(event) {
          live({ type: 'engine', job_id: job.id, event });
          if (event.type === 'preview') {
            previews.push({
              node_id: event.node_id,
              content_type: event.format === 'png' ? 'image/png' : 'image/jpeg',
              data_base64: toBase64(event.bytes),
            });
            return;
          }
          reuse.update(event);
          const snapshot = tracker.update(event);
          if (snapshot) progress.push(snapshot);
        },
        async commitOutput(output) {
          let committed: Awaited<ReturnType<typeof commitJobOutput>>;
          try {
            // An output is a write of the run: fenced by the lease in the commit's own transaction.
            committed = await commitJobOutput(ctx, job, output, runOutputs);
          } catch (err) {
            if (!(err instanceof LeaseLostError)) throw err;
            lost = true;
            throw new JobAbort('shutdown');
          }
          const { asset, created } = committed;
          if (output.temporary) temps.add(asset.id);
          // A temporary file is no output of the job: only the account channel hears of it.
          if (created && !output.temporary) hub.publish(job.id, { type: 'output', asset });
          // Also for an output a re-run found already committed: /ws names files after it.
          live({ type: 'output', job_id: job.id, asset });
          return toOutputAsset(asset);
        },
        readAsset: (ref) => readJobAsset(ctx, job.account_id, ref),
        partner: partnerServices(ctx, job.account_id, extraData.get(job.id)),
      };
      await engine.execute({ id: job.id, account_id: job.account_id, workflow, extra_data: extraData.get(job.id), attempt: job.attempts }, execution);
      outcome = { kind: 'succeeded' };
    } catch (err) {
      const reason = controller.signal.aborted ? controller.signal.reason : undefined;
      if (err === EXPIRED) {
        outcome = { kind: 'expired' };
      } else if (lost) {
        outcome = { kind: 'lost' };
      } else if (reason instanceof JobAbort) {
        outcome = { kind: reason.kind === 'cancel' ? 'canceled' : 'shutdown' };
      } else if (err instanceof ExecutionError) {
        outcome = { kind: 'failed', error: errorRecord(err) };
      } else {
        log('job failed with an unexpected error', job, err);
        outcome = { kind: 'failed', error: jobError('internal_error', INTERNAL_ERROR) };
      }
    } finally {
      clearInterval(poll);
      progress.cancel();
      saves.cancel();
      previews.cancel();
      await saving;
    }
    let ended: Awaited<ReturnType<typeof settle>> = null;
    try {
      ended = await settle(
        job,
        outcome,
        tracker,
        { outputs_reused: reuse.reused, cached_nodes: reuse.cachedNodes, temp_asset_ids: [...temps] },
        ending,
      );
      // A job queued again (shutdown) has not ended: its next run is timed instead.
      if (ended && ended.status !== 'queued') ctx.metrics.jobEnded(job, ended.status, ctx.now());
    } finally {
      active.delete(job.id);
      published.delete(job.id);
      extraData.delete(job.id);
      hub.announce(job, ended?.status ?? 'unknown', ended?.error ?? null, ended ?? undefined);
      hub.forget(job.id);
    }
  };
}

const EXPIRED = Symbol('expired');
