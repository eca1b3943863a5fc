// Submitting a workflow, whichever surface it came through (POST /api/v2/jobs,
// the cloud surface's POST /prompt): everything between a parsed body and a
// rendered answer. The partner-node key, the workflow's checks, a client-chosen
// job id, then admission and the durable `queued` row. Refusals of the
// submission itself are the typed errors below, in no surface's shape: each
// surface renders them its own way (core/v2/errors.ts, core/cloud/prompt-errors.ts).
// Errors every surface already answers alike (a bad extra_data, credits, a
// full queue, a reused Idempotency-Key) stay ApiErrors.
import type { AccountRecord, JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { checkWorkflow, type WorkflowProblem } from './check-workflow.ts';
import { enqueueJob } from './enqueue.ts';
import { type PartnerKeyFields, partnerKey, partnerNodes } from './partner-key.ts';

/** The workflow cannot run as submitted (an editor export, no nodes, the engine's verdict, a foreign asset). */
export class WorkflowRefusedError extends Error {
  constructor(
    readonly problem: WorkflowProblem,
    readonly workflow: Record<string, unknown>,
  ) {
    super(problem.message);
    this.name = 'WorkflowRefusedError';
  }
}

/** The workflow has partner nodes and the submission brought no key for them. */
export class PartnerKeyRequiredError extends Error {
  constructor(readonly nodes: Array<[id: string, classType: string]>) {
    super(
      `This workflow contains partner nodes that call external services (${nodes.map(([id, cls]) => `${id} (${cls})`).join(', ')}); send your API key as extra_data.api_key_platform_org to run them.`,
    );
    this.name = 'PartnerKeyRequiredError';
  }
}

/** The job id the client chose is taken (found before the insert, or lost in a race for it). */
export class JobIdInUseError extends Error {
  constructor(readonly id: string) {
    super(`The job id ${id} is already in use.`);
    this.name = 'JobIdInUseError';
  }
}

export interface Submission {
  workflow: Record<string, unknown>;
  extra_data?: PartnerKeyFields;
  /** A job id the client chose (a UUID, checked by the surface); a new one otherwise. */
  id?: string;
  /** Pick order within the account's queue (checked by the surface); default 0. */
  priority?: number;
  /** The caller's object shown with the job (checked by the surface); default none. */
  metadata?: Record<string, unknown> | null;
}

export interface Submitted {
  job: JobSummary;
  /** How many of the account's jobs were queued ahead of it at admission. */
  queuePosition: number;
}

export async function submitWorkflow(
  ctx: ServiceContext,
  request: Request,
  account: AccountRecord,
  { workflow, extra_data, id, priority = 0, metadata = null }: Submission,
): Promise<Submitted> {
  const extra = partnerKey(ctx, extra_data);
  const problem = await checkWorkflow(ctx, account, workflow);
  if (problem) throw new WorkflowRefusedError(problem, workflow);
  const partners = await partnerNodes(ctx, workflow);
  if (partners.length > 0 && !extra?.api_key_platform_org) throw new PartnerKeyRequiredError(partners);

  if (id !== undefined && (await ctx.metadata.getJobById(id))) throw new JobIdInUseError(id);
  try {
    const { job, ahead } = await enqueueJob(ctx, request, account, { workflow, extra, id, priority, metadata });
    // Admission counted every queued job as ahead, which holds in FIFO order and
    // saves a count per submission; a job with a priority of its own is placed
    // among its account's jobs by one. (A default job of an account that also has
    // negative-priority jobs queued is shown those as ahead until its first poll.)
    return { job, queuePosition: priority === 0 ? ahead : await ctx.metadata.countQueuedBefore(job) };
  } catch (err) {
    // Two submissions racing for one id: the loser's insert fails on the key.
    if (id !== undefined && !(err instanceof ApiError) && (await ctx.metadata.getJobById(id))) throw new JobIdInUseError(id);
    throw err;
  }
}
