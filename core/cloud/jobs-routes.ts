// Cloud-compatible routes (jobs): submission, status, queue, interrupt,
// history, the cloud's job list, system stats, feature flags, and the
// reference's routes with nothing behind them here (free, extensions,
// embeddings). Declared without the `/api` prefix; surface.ts serves each
// under `/api` and bare.

import type { Route } from '../http/surface.ts';
import { getCloudJob, listCloudJobs } from './cloud-jobs.ts';
import { getEmbeddings, getExtensions, postFree } from './empty-routes.ts';
import { getHistory, getHistoryItem } from './history.ts';
import { postHistory } from './history-manage.ts';
import { getJobStatus } from './job-status.ts';
import { getPrompt, postPrompt } from './prompt.ts';
import { getQueue, postInterrupt, postQueue } from './queue.ts';
import { getFeatures, getSystemStats } from './system.ts';

export const CLOUD_JOBS_ROUTES: Route[] = [
  ['POST', '/prompt', (r, c) => postPrompt(r, c)],
  ['GET', '/prompt', (r, c) => getPrompt(r, c)],
  ['GET', '/job/:prompt_id/status', (r, c, p) => getJobStatus(r, c, p.prompt_id)],
  ['GET', '/queue', (r, c) => getQueue(r, c)],
  ['POST', '/queue', (r, c) => postQueue(r, c)],
  ['POST', '/interrupt', (r, c) => postInterrupt(r, c)],
  ['GET', '/history', (r, c) => getHistory(r, c)],
  ['POST', '/history', (r, c) => postHistory(r, c)],
  ['GET', '/history/:prompt_id', (r, c, p) => getHistoryItem(r, c, p.prompt_id)],
  ['GET', '/jobs', (r, c) => listCloudJobs(r, c)],
  ['GET', '/jobs/:id', (r, c, p) => getCloudJob(r, c, p.id)],
  ['GET', '/system_stats', (r, c) => getSystemStats(r, c)],
  ['GET', '/features', (r, c) => getFeatures(r, c)],
  ['POST', '/free', (r, c) => postFree(r, c)],
  ['GET', '/extensions', (r, c) => getExtensions(r, c)],
  ['GET', '/embeddings', (r, c) => getEmbeddings(r, c)],
];
