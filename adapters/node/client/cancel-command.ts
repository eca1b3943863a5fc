// `graphrun cancel ID`: POST /api/v2/jobs/{id}/cancel. The server answers the
// job as it is afterwards: canceled (it was queued), canceling (it stops at
// its next node or step) or its terminal state when it had already ended.
import { createApi } from './api.ts';
import { type ConnectionFlags, clientConfig } from './config.ts';
import { EXIT_OK } from './errors.ts';
import type { Job } from './types.ts';

export interface CancelFlags extends ConnectionFlags {
  json?: boolean;
}

export async function cancelCommand(id: string, flags: CancelFlags, env: Record<string, string | undefined>): Promise<number> {
  const api = createApi(clientConfig(flags, env));
  const job = await api.json<Job>(`/api/v2/jobs/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
  if (flags.json) process.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
  else {
    const what = job.status === 'canceled' || job.status === 'canceling' ? job.status : `already ${job.status}, nothing to cancel`;
    process.stdout.write(`job ${job.id} ${what}\n`);
  }
  return EXIT_OK;
}
