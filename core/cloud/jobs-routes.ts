// Cloud-compatible routes (jobs): filled in by the cloud surface work.
import type { CloudRoute } from './respond.ts';

export const CLOUD_JOBS_ROUTES: CloudRoute[] = [];
