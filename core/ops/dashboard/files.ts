// The files the dashboard page loads from dashboard/{name}: its style sheet
// and its script modules (plain browser JavaScript, imported by each other
// by relative name). Served as they are: there is no build step.
import { API_SCRIPT } from './script-api.ts';
import { APP_SCRIPT } from './script-app.ts';
import { DETAIL_SCRIPT } from './script-detail.ts';
import { DOM_SCRIPT } from './script-dom.ts';
import { JOBS_SCRIPT } from './script-jobs.ts';
import { LIVE_SCRIPT } from './script-live.ts';
import { OPS_SCRIPT } from './script-ops.ts';
import { PREVIEWS_SCRIPT } from './script-previews.ts';
import { SSE_SCRIPT } from './script-sse.ts';
import { STORE_SCRIPT } from './script-store.ts';
import { SUBMIT_SCRIPT } from './script-submit.ts';
import { UPLOAD_SCRIPT } from './script-upload.ts';
import { DASHBOARD_STYLE } from './style.ts';

export interface DashboardFile {
  type: string;
  body: string;
}

const JS = 'text/javascript; charset=utf-8';

export const DASHBOARD_FILES: ReadonlyMap<string, DashboardFile> = new Map([
  ['style.css', { type: 'text/css; charset=utf-8', body: DASHBOARD_STYLE }],
  ['app.js', { type: JS, body: APP_SCRIPT }],
  ['api.js', { type: JS, body: API_SCRIPT }],
  ['detail.js', { type: JS, body: DETAIL_SCRIPT }],
  ['dom.js', { type: JS, body: DOM_SCRIPT }],
  ['jobs.js', { type: JS, body: JOBS_SCRIPT }],
  ['live.js', { type: JS, body: LIVE_SCRIPT }],
  ['ops.js', { type: JS, body: OPS_SCRIPT }],
  ['previews.js', { type: JS, body: PREVIEWS_SCRIPT }],
  ['sse.js', { type: JS, body: SSE_SCRIPT }],
  ['store.js', { type: JS, body: STORE_SCRIPT }],
  ['submit.js', { type: JS, body: SUBMIT_SCRIPT }],
  ['upload.js', { type: JS, body: UPLOAD_SCRIPT }],
]);
