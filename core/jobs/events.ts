// GET /api/v2/jobs/{id}/events: the job's live state as Server-Sent Events.
// On connect: `status` (the whole Job), the latest `progress`, the latest
// `preview` (of a finished job: its progress, then its status). Then live
// events from this instance's hub, plus a once-a-second read of the row
// that catches what the hub cannot carry: queue_position moving while
// queued, and, for a job another instance runs, its saved progress and
// committed outputs (previews exist only where the job runs). Ends after
// the terminal `status`. Live push only: no ids, no replay.
// A reader that falls behind skips progress and preview frames (each is a
// snapshot, the next one or the terminal status re-syncs it) rather than
// making the server hold them.

import { stringifyJson } from '../../lib/json.ts';
import type { AccountRecord, JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { errorText } from '../log.ts';
import { createSseStream, SSE_HEADERS } from './sse.ts';
import { isTerminal, type JobStatus } from './state-machine.ts';
import { findOwnJob, isRetained, jobView, outputView } from './view.ts';

const ROW_POLL_MS = 1000;
/** Bytes a stream may have unread before snapshot frames are skipped. */
const BEHIND_BYTES = 256 * 1024;

export async function jobEvents(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account: AccountRecord = await ctx.auth.authenticate(request);
  const job = await findOwnJob(ctx, account, id);
  const release = ctx.jobs.streams.acquire(account.id);
  let unsubscribe = () => {};
  let poll: ReturnType<typeof setInterval> | undefined;
  const cleanup = () => {
    release();
    unsubscribe();
    clearInterval(poll);
    ctx.jobs.sessions.delete(finish);
  };
  const sse = createSseStream({ signal: request.signal, keepaliveMs: ctx.config.sseKeepaliveMs, onCancel: cleanup });
  function finish() {
    if (!sse.closed) sse.close();
    cleanup();
  }
  ctx.jobs.sessions.add(finish);

  // One queue of sends, so frames leave in the order their causes happened.
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (work: () => Promise<void> | void) => {
    chain = chain
      .then(() => (sse.closed ? undefined : work()))
      .catch((err: unknown) => {
        ctx.logger.error('job event stream failed', { job_id: job.id, error: errorText(err) });
        finish();
      });
  };

  let last: { status: string; position: number | null } | null = null;
  let lastProgress: string | null = null;
  const sentOutputs = new Set<string>();
  const sendProgress = (progress: Record<string, unknown>) => {
    const json = stringifyJson(progress);
    if (json === lastProgress || sse.buffered > BEHIND_BYTES) return;
    lastProgress = json;
    sse.send({ event: 'progress', text: json });
  };
  /** For a job this instance does not run: what the row shows that the hub did not bring. */
  async function remote(row: JobSummary) {
    if (ctx.jobs.runsHere(row.id) || (row.status !== 'running' && row.status !== 'canceling')) return;
    if (row.progress) sendProgress(row.progress);
    for (const asset of await ctx.metadata.listJobAssets(row.account_id, row.id)) {
      if (sentOutputs.has(asset.id)) continue;
      sentOutputs.add(asset.id);
      sse.send({ event: 'output', data: await outputView(ctx, request, asset) });
    }
  }
  /** Sends `status` when the status or queue position changed (always when `force`); ends after a terminal one. */
  async function status(force: boolean) {
    const row = await ctx.metadata.getJob(account.id, job.id);
    if (!row || !isRetained(row, ctx.now())) return finish();
    const position = row.status === 'queued' ? await ctx.metadata.countQueuedBefore(row) : null;
    if (force || !last || last.status !== row.status || last.position !== position) {
      last = { status: row.status, position };
      const view = await jobView(ctx, request, row, { queuePosition: position });
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

  unsubscribe = ctx.jobs.hub.subscribe(job.id, (event) => {
    switch (event.type) {
      case 'status':
        return enqueue(() => status(false));
      case 'progress':
        return enqueue(() => sendProgress(event.progress));
      case 'preview':
        return enqueue(() => void (sse.buffered > BEHIND_BYTES || sse.send({ event: 'preview', data: event.preview })));
      case 'output':
        return enqueue(async () => {
          if (sentOutputs.has(event.asset.id)) return;
          sentOutputs.add(event.asset.id);
          sse.send({ event: 'output', data: await outputView(ctx, request, event.asset) });
        });
    }
  });
  enqueue(async () => {
    await status(true);
    const preview = ctx.jobs.hub.latestPreview(job.id);
    if (preview && !sse.closed) sse.send({ event: 'preview', data: preview });
  });
  poll = setInterval(() => enqueue(() => status(false)), ROW_POLL_MS);
  (poll as { unref?: () => void }).unref?.();

  return new Response(sse.stream, { headers: SSE_HEADERS });
}
