// GET /api/v2/jobs/{id}/events: the job's live state as Server-Sent Events.
// On connect: `status` (the whole Job), the latest `progress`, the latest
// `preview` (of a finished job: its progress, then its status). Then live
// events from this instance's hub (which, on a storage with an event bus,
// also brings those of the instance running the job), plus a read of the
// row that catches what the hub cannot carry: queue_position moving while
// queued, once a second; and, for a job another instance runs, its saved
// progress and committed outputs: once a second without a bus, and with
// one only as a safety net and whenever the bus may have lost events.
// The snapshot is taken once the hub hears the job, so nothing between the
// two is lost. Ends after the terminal `status`. Live push only: no ids, no
// replay.
// A reader that falls behind skips progress and preview frames (each is a
// snapshot, the next one or the terminal status re-syncs it) rather than
// making the server hold them.

import { stringifyJson } from '../../lib/json.ts';
import { type AccountRecord, type AssetRecord, commitOrder, type JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { eventStreamResponse } from '../http/request-options.ts';
import { errorText } from '../log.ts';
import type { HubListener } from './hub.ts';
import { createSseStream, SSE_HEADERS } from './sse.ts';
import { isTerminal, type JobStatus } from './state-machine.ts';
import { findOwnJob, isRetained, jobView, outputView } from './view.ts';

const ROW_POLL_MS = 1000;
/** With a bus, a running job's events come live: the row is read this often only in case they stop. */
const BUS_ROW_POLL_MS = 15_000;
/** Bytes a stream may have unread before snapshot frames are skipped. */
const BEHIND_BYTES = 256 * 1024;

export async function jobEvents(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account: AccountRecord = await ctx.auth.authenticate(request);
  const { hub } = ctx.jobs;
  const before = hub.delivered();
  const job = await findOwnJob(ctx, account, id);
  /**
   * The row read above, while it is still the newest: the connect snapshot
   * needs no read of its own when the hub listened at once (in process) and
   * handed out no event since the read. Over a bus, listening takes a while
   * and an event sent meanwhile never arrives: the snapshot reads the row.
   */
  let fresh: JobSummary | undefined = job;
  let subscribing = true;
  const release = ctx.jobs.streams.acquire(account.id);
  let unsubscribe = () => {};
  let poll: ReturnType<typeof setTimeout> | undefined;
  let live = false;
  let goLive = () => {};
  const cleanup = () => {
    release();
    unsubscribe();
    clearTimeout(poll);
    ctx.jobs.sessions.delete(finish);
    goLive();
  };
  const sse = createSseStream({ signal: request.signal, keepaliveMs: ctx.config.sseKeepaliveMs, onCancel: cleanup });
  function finish() {
    if (!sse.closed) sse.close();
    cleanup();
  }
  ctx.jobs.sessions.add(finish);

  // One queue of sends, so frames leave in the order their causes happened;
  // it starts once the hub hears the job.
  let chain = new Promise<void>((resolve) => {
    goLive = resolve;
  });
  const enqueue = (work: () => Promise<void> | void) => {
    chain = chain
      .then(() => (sse.closed ? undefined : work()))
      .catch((err: unknown) => {
        ctx.logger.error('job event stream failed', { job_id: job.id, error: errorText(err) });
        finish();
      });
  };

  /**
   * The job's outputs as this stream knows them, while that is all of them.
   * It starts from a connect row whose outputs never changed (view_version 0)
   * and takes each output event's asset (in process, the asset as written).
   * A row whose view_version counts exactly as many changes has no output
   * the stream has not seen, so its view takes these, not a read of them.
   * Any change the stream did not see (an asset deleted, an event lost, a
   * listing of another instance's outputs) makes the counts differ, and the
   * view reads them.
   */
  let known: { assets: AssetRecord[]; version: number } | undefined;
  let last: { status: string; position: number | null } | null = null;
  let lastProgress: string | null = null;
  let lastValue = -1;
  const sentOutputs = new Set<string>();
  const sendProgress = (progress: Record<string, unknown>) => {
    const json = stringifyJson(progress);
    if (json === lastProgress || sse.buffered > BEHIND_BYTES) return;
    lastProgress = json;
    if (typeof progress.value === 'number') lastValue = Math.max(lastValue, progress.value);
    sse.send({ event: 'progress', text: json });
  };
  /** For a job this instance does not run: what the row shows that the hub did not bring. */
  async function remote(row: JobSummary) {
    if (ctx.jobs.runsHere(row.id) || (row.status !== 'running' && row.status !== 'canceling')) return;
    // The row's progress lags what the bus brought: only a newer one is news.
    if (row.progress && (!ctx.events || (row.progress.value as number) > lastValue)) sendProgress(row.progress);
    known = undefined;
    for (const asset of await ctx.metadata.listJobAssets(row.account_id, row.id)) {
      if (sentOutputs.has(asset.id)) continue;
      sentOutputs.add(asset.id);
      sse.send({ event: 'output', data: await outputView(ctx, request, asset) });
    }
  }
  /**
   * Sends `status` when the status or queue position changed (always when
   * `force`); ends after a terminal one. `written`: the row as the change
   * being told wrote it (a status event of this instance). A terminal one is
   * shown as it is, with no read: no later change of status can follow it,
   * so a read would show the same status. Any other may already be behind
   * what this stream showed (an event is told after its write): it is read.
   */
  async function status(force: boolean, written?: JobSummary) {
    const final = written && isTerminal(written.status as JobStatus) ? written : undefined;
    const row = final ?? fresh ?? (await ctx.metadata.getJob(account.id, job.id));
    fresh = undefined;
    if (!row || !isRetained(row, ctx.now())) return finish();
    const position = row.status === 'queued' ? await ctx.metadata.countQueuedBefore(row) : null;
    if (force && row.view_version === 0) known = { assets: [], version: 0 };
    if (force || !last || last.status !== row.status || last.position !== position) {
      last = { status: row.status, position };
      const outputs = row.started_at !== null && known?.version === row.view_version ? known.assets.slice().sort(commitOrder) : undefined;
      const view = await jobView(ctx, request, row, { queuePosition: position, outputs });
      const terminal = isTerminal(row.status as JobStatus);
      // The connect snapshot is status then progress, but a finished job's
      // stream ends on its status: its progress goes first.
      if (force && terminal && view.progress) sendProgress(view.progress);
      sse.send({ event: 'status', data: view });
      if (force) {
        if (!terminal && view.progress) sendProgress(view.progress);
        for (const output of view.outputs) sentOutputs.add(output.id);
      }
    }
    if (isTerminal(row.status as JobStatus)) return finish();
    await remote(row);
  }

  enqueue(async () => {
    await status(true);
    const preview = hub.latestPreview(job.id);
    if (preview && !sse.closed) sse.send({ event: 'preview', data: preview });
  });
  const listener: HubListener = (event) => {
    switch (event.type) {
      case 'status':
        return enqueue(() => status(false, event.row));
      case 'progress':
        return enqueue(() => sendProgress(event.progress));
      case 'preview':
        return enqueue(() => void (sse.buffered > BEHIND_BYTES || sse.send({ event: 'preview', data: event.preview })));
      case 'output':
        return enqueue(async () => {
          if (sentOutputs.has(event.asset.id)) return;
          sentOutputs.add(event.asset.id);
          if (known) {
            known.assets.push(event.asset);
            known.version++;
          }
          sse.send({ event: 'output', data: await outputView(ctx, request, event.asset) });
        });
    }
  };
  unsubscribe = hub.subscribe(job.id, listener, () => {
    if (live) return enqueue(() => status(false));
    live = true;
    if (!subscribing || hub.delivered() !== before) fresh = undefined;
    goLive();
  });
  subscribing = false;
  const schedulePoll = () => {
    // Queue positions move with no event of this job: a queued one (or one not read yet) is read as often as without a bus.
    const ms = !ctx.events || !last || last.status === 'queued' ? ROW_POLL_MS : BUS_ROW_POLL_MS;
    poll = setTimeout(() => {
      enqueue(() => status(false));
      schedulePoll();
    }, ms);
    (poll as { unref?: () => void }).unref?.();
  };
  schedulePoll();

  return eventStreamResponse(request, sse, { headers: SSE_HEADERS });
}
