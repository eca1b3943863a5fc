// Reading the workflows of jobs, which may weigh megabytes each: one job's
// for the answer that returns it or the run that executes it, and those of a
// listing a page at a time, so an answer holds one page of them, never the
// whole queue. Every other job read leaves the workflow out (JobSummary).
import type { JobStore, JobSummary } from '../../storage/types.ts';

type Workflow = Record<string, unknown>;
type Reader = Pick<JobStore, 'listJobWorkflows'>;

/** Workflows read at once by `pagesOfWorkflows`: a few, as each may be megabytes. */
export const WORKFLOW_PAGE = 4;

/** The job's workflow; null when its row is gone. */
export async function jobWorkflow(store: Reader, job: Pick<JobSummary, 'id' | 'account_id'>): Promise<Workflow | null> {
  const [found] = await store.listJobWorkflows(job.account_id, [job.id]);
  return found?.workflow ?? null;
}

/**
 * The jobs (all of one account) with their workflows, in their order, a page
 * of `size` per read; a job whose row went meanwhile is left out. Each page
 * is read when the one before has been taken.
 */
export async function* pagesOfWorkflows<J extends JobSummary>(
  store: Reader,
  jobs: readonly J[],
  size = WORKFLOW_PAGE,
): AsyncGenerator<Array<[J, Workflow]>> {
  for (let i = 0; i < jobs.length; i += size) {
    const page = jobs.slice(i, i + size);
    const read = await store.listJobWorkflows(
      page[0].account_id,
      page.map((j) => j.id),
    );
    const byId = new Map(read.map((w) => [w.id, w.workflow]));
    const out: Array<[J, Workflow]> = [];
    for (const job of page) {
      const workflow = byId.get(job.id);
      if (workflow !== undefined) out.push([job, workflow]);
    }
    yield out;
  }
}
