// dashboard/live.js: jobs followed live, one event stream per queued or
// running job, a few at once: a browser opens about six connections to a
// host over HTTP/1.1 and the service caps streams per account, so the rest
// are caught by polling the list (jobs.js), and a hidden tab holds none
// (app.js). A stream that ends before its job does is opened again after a
// pause.
export const LIVE_SCRIPT = String.raw`
import { jobPath } from './api.js';
import { readEvents } from './sse.js';
import { addOutput, getJob, isActive, putJob, setPreview, setProgress } from './store.js';

const MAX_STREAMS = 4;
const streams = new Map();
let clock = 0;

const pause = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });

function handle(id, type, data) {
  let value;
  try { value = JSON.parse(data); } catch { return; }
  if (type === 'status') putJob(value);
  else if (type === 'progress') setProgress(id, value);
  else if (type === 'output') addOutput(id, value);
  else if (type === 'preview' && /^image\/(png|jpeg|webp|gif)$/.test(value.content_type) && typeof value.data_base64 === 'string') setPreview(id, value);
}

async function run(id, signal) {
  let failures = 0;
  while (!signal.aborted) {
    try {
      await readEvents(jobPath(id) + '/events', (type, data) => { failures = 0; handle(id, type, data); }, signal);
    } catch (err) {
      if (signal.aborted) return;
      // Refused (no key, job gone, too many streams): the list's polling covers it.
      if (err && (err.status === 401 || err.status === 404 || err.status === 429)) return;
      failures++;
    }
    if (!isActive(getJob(id))) return;
    await pause(Math.min(30000, 1000 * 2 ** failures), signal);
  }
}

export const isFollowed = (id) => streams.has(id);

/** Follows the job live; false when every stream is taken (a job the user opened takes one from another). */
export function follow(id, urgent) {
  const known = streams.get(id);
  if (known) { known.used = ++clock; return true; }
  if (!isActive(getJob(id))) return false;
  if (streams.size >= MAX_STREAMS) {
    if (!urgent) return false;
    let oldest = null;
    for (const [other, s] of streams) if (!oldest || s.used < oldest[1].used) oldest = [other, s];
    unfollow(oldest[0]);
  }
  const controller = new AbortController();
  const entry = { controller, used: ++clock };
  streams.set(id, entry);
  run(id, controller.signal).finally(() => { if (streams.get(id) === entry) streams.delete(id); });
  return true;
}

export function unfollow(id) {
  const s = streams.get(id);
  if (!s) return;
  streams.delete(id);
  s.controller.abort();
}

export function unfollowAll() {
  for (const id of [...streams.keys()]) unfollow(id);
}
`;
