// GET /jobs (JobsListResponse of the cloud contract: filters `status`
// (comma-separated cloud statuses), `output_type`, `workflow_id`; `sort_by`
// create_time | execution_time, `sort_order`, `offset`, `limit` 1-1000) and
// GET /jobs/{id} (JobDetailResponse). As the contract says, `create_time` and
// `update_time` are Unix seconds and `execution_*_time` Unix milliseconds.
// Jobs carry no workflow id here (extra_data is not kept), so a `workflow_id`
// filter matches none. Terminal jobs carry their outputs' count and a preview.
import type { AssetRecord, JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { invalid, notFound } from '../errors.ts';
import { isTerminal, type JobStatus } from '../jobs/state-machine.ts';
import { findOwnJob } from '../jobs/view.ts';
import { jobWorkflow } from '../jobs/workflows.ts';
import { cloudAccount } from './auth.ts';
import { executionError, historyStatus, nodeMeta } from './entries.ts';
import { outputFileRef, outputsByNode, uiKeyOf } from './file-names.ts';
import { updatedAt } from './job-status.ts';
import { enumParam, intParam } from './params.ts';
import { CLOUD_STATUSES, type CloudStatus, cloudStatus, jobStatusesOf, VISIBLE_STATUSES } from './status.ts';
import { keptTempFiles } from './temp-files.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };
const MEDIA = ['image', 'video', 'audio'] as const;
const seconds = (ms: number) => Math.floor(ms / 1000);

function statusFilter(url: URL): string[] {
  const raw = url.searchParams.get('status');
  if (raw === null || raw.trim() === '') return VISIBLE_STATUSES;
  const wanted = raw.split(',').map((s) => s.trim());
  for (const s of wanted) {
    if (!(CLOUD_STATUSES as readonly string[]).includes(s)) {
      throw invalid(`status: "${s}" is not one of ${CLOUD_STATUSES.join(', ')}`, 'status', 'not allowed');
    }
  }
  return jobStatusesOf(wanted as CloudStatus[]);
}

/** What a list entry and the detail share. */
function summary(job: JobSummary, outputs: AssetRecord[] | null): Record<string, unknown> {
  const entry: Record<string, unknown> = { id: job.id, status: cloudStatus(job.status), create_time: seconds(job.created_at) };
  if (job.status === 'failed') entry.execution_error = { ...executionError(job), current_inputs: {}, current_outputs: {} };
  if (outputs) {
    const preview = outputs.find((a) => (MEDIA as readonly string[]).includes(a.output_type ?? '')) ?? outputs[0];
    if (preview) entry.preview_output = { ...outputFileRef(preview), nodeId: preview.node_id, mediaType: uiKeyOf(preview.output_type) };
    entry.outputs_count = outputs.length;
    if (job.started_at !== null) entry.execution_start_time = job.started_at;
    if (job.completed_at !== null) entry.execution_end_time = job.completed_at;
  }
  return entry;
}

const finished = (job: JobSummary) => isTerminal(job.status as JobStatus);
const outputsOf = (ctx: ServiceContext, job: JobSummary) =>
  finished(job) ? ctx.metadata.listJobAssets(job.account_id, job.id) : Promise.resolve(null);

export async function listCloudJobs(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const url = new URL(request.url);
  const statuses = statusFilter(url);
  const outputType = url.searchParams.get('output_type') || undefined;
  if (outputType !== undefined) enumParam(url, 'output_type', MEDIA, 'image');
  const sort = enumParam(url, 'sort_by', ['create_time', 'execution_time'], 'create_time');
  const order = enumParam(url, 'sort_order', ['asc', 'desc'], 'desc');
  const offset = intParam(url, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const limit = intParam(url, 'limit', { min: 1, max: 1000, fallback: 100 });
  // No job here has a workflow id, so filtering by one leaves nothing.
  const filter = { statuses: url.searchParams.has('workflow_id') ? [] : statuses, expires_after: ctx.now(), output_type: outputType };
  const [jobs, total] = await Promise.all([
    ctx.metadata.listAccountJobs(account.id, { ...filter, sort: sort === 'execution_time' ? 'execution_time' : 'seq', order, offset, limit }),
    ctx.metadata.countAccountJobs(account.id, filter),
  ]);
  const outputs = await Promise.all(jobs.map((j) => outputsOf(ctx, j)));
  return Response.json(
    {
      jobs: jobs.map((j, i) => summary(j, outputs[i])),
      pagination: { offset, limit, total, has_more: offset + jobs.length < total },
    },
    { headers: NO_STORE },
  );
}

export async function getCloudJob(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const job = await findOwnJob(ctx, account, id);
  const [outputs, workflow, temps] = await Promise.all([
    outputsOf(ctx, job),
    jobWorkflow(ctx.metadata, job),
    finished(job) ? keptTempFiles(ctx, job) : Promise.resolve([]),
  ]);
  if (!workflow) throw notFound('No job with this id.');
  const detail: Record<string, unknown> = { ...summary(job, outputs), workflow, update_time: seconds(updatedAt(job)) };
  if (outputs) {
    // As history shows the job: its previews too, while they are kept.
    detail.outputs = outputsByNode(outputs, temps);
    detail.execution_status = historyStatus(job);
    detail.execution_meta = nodeMeta(outputs, temps);
  }
  return Response.json(detail, { headers: NO_STORE });
}
