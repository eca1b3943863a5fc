// `graphrun jobs`: the caller's jobs, newest first, as a table (or, with
// --json, the Job objects), from GET /api/v2/jobs, which pages by cursor:
// pages are read until --limit jobs are shown or none are left. That route is
// this service's addition to the v2 contract; another server may not have it.
import { createApi } from './api.ts';
import { type ConnectionFlags, clientConfig } from './config.ts';
import { ApiError, ClientError, EXIT_OK } from './errors.ts';
import { shortTime } from './job-text.ts';
import { percentOf } from './progress-text.ts';
import { tableText } from './table.ts';
import type { Job } from './types.ts';

export interface JobsFlags extends ConnectionFlags {
  status?: string[];
  limit: number;
  json?: boolean;
}

type Env = Record<string, string | undefined>;

/** Most jobs one request asks for (the route's own bound). */
const PAGE = 100;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function table(jobs: Job[]): string {
  const rows = jobs.map((job) => [
    job.id,
    job.status,
    shortTime(job.created_at),
    job.status === 'succeeded' || job.progress ? `${percentOf(job)}%` : '-',
    String(job.outputs?.length ?? 0),
    job.error ? clip(`${job.error.code}: ${job.error.message}`.replace(/\s+/g, ' '), 80) : '',
  ]);
  const header = ['ID', 'STATUS', 'CREATED (UTC)', 'PROGRESS', 'OUTPUTS', 'ERROR'];
  return tableText([header, ...rows]);
}

export async function jobsCommand(flags: JobsFlags, env: Env): Promise<number> {
  const api = createApi(clientConfig(flags, env));
  const jobs: Job[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(Math.min(PAGE, flags.limit - jobs.length)) });
    if (flags.status?.length) query.set('status', flags.status.join(','));
    if (cursor) query.set('cursor', cursor);
    let page: { jobs: Job[]; next_cursor: string | null };
    try {
      page = await api.json(`/api/v2/jobs?${query}`);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 405) && jobs.length === 0) {
        throw new ClientError(`${err.message} (this server may not list jobs: GET /api/v2/jobs is an addition to the v2 contract)`);
      }
      throw err;
    }
    jobs.push(...page.jobs);
    cursor = page.next_cursor;
  } while (cursor && jobs.length < flags.limit);
  if (flags.json) process.stdout.write(`${JSON.stringify(jobs, null, 2)}\n`);
  else process.stdout.write(jobs.length === 0 ? 'no jobs\n' : `${table(jobs)}\n`);
  return EXIT_OK;
}
