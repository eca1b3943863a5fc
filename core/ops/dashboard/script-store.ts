// dashboard/store.js: the jobs the page knows, by id, and who to tell when one
// changes. A job never moves back: a snapshot older than what is known (a
// list read racing a stream) is dropped, and outputs only accumulate.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const STORE_SCRIPT = String.raw`
const RANK = { queued: 0, running: 1, canceling: 2 };
const rank = (status) => (status in RANK ? RANK[status] : 3);
export const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];
export const isActive = (job) => !!job && !TERMINAL.includes(job.status);

const jobs = new Map();
const listeners = new Set();

export const getJob = (id) => jobs.get(id);
/** fn(job) runs after every change of a job. */
export const onChange = (fn) => listeners.add(fn);

function set(job) {
  jobs.set(job.id, job);
  for (const fn of listeners) fn(job);
  return job;
}

/** A whole Job as the API answered it. */
export function putJob(job) {
  const known = jobs.get(job.id);
  if (!known) return set(job);
  if (rank(job.status) < rank(known.status)) return known;
  const seen = new Set((job.outputs || []).map((o) => o.id));
  const outputs = (job.outputs || []).concat(known.outputs.filter((o) => !seen.has(o.id)));
  // A snapshot has no preview (it is beside the Job): the one seen live stays while the job runs.
  const live = isActive(job) && known.live_preview ? { live_preview: known.live_preview } : {};
  return set(Object.assign({}, job, { outputs }, live));
}

export function setProgress(id, progress) {
  const known = jobs.get(id);
  if (known && isActive(known)) set(Object.assign({}, known, { progress }));
}

export function addOutput(id, output) {
  const known = jobs.get(id);
  if (known && !known.outputs.some((o) => o.id === output.id)) set(Object.assign({}, known, { outputs: known.outputs.concat([output]) }));
}

/** A live preview image of a running job: not part of the Job, kept beside it. */
export function setPreview(id, preview) {
  const known = jobs.get(id);
  if (known && isActive(known)) set(Object.assign({}, known, { live_preview: preview }));
}

export function clearJobs() {
  jobs.clear();
}
`;
