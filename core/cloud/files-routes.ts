// Cloud-compatible routes (files): filled in by the cloud surface work.
import type { CloudRoute } from './respond.ts';

export const CLOUD_FILES_ROUTES: CloudRoute[] = [];
