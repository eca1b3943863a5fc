// dashboard/jobs.js: the jobs list, the caller's jobs newest first (GET
// api/v2/jobs, a page at a time, filtered by status). Rows follow their jobs
// through the store; queued and running ones are followed live, and the
// first page is read again now and then for the jobs no stream follows and
// for jobs submitted elsewhere.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const JOBS_SCRIPT = String.raw`
import { getJson } from './api.js';
import { fmtMs, fmtTime, h, progressText, statusBadge } from './dom.js';
import { follow, isFollowed } from './live.js';
import { getJob, isActive, onChange, putJob } from './store.js';

const list = document.getElementById('jobs');
const empty = document.getElementById('jobs-empty');
const more = document.getElementById('more');
const filter = document.getElementById('status-filter');
const rows = new Map();
let cursor = null;
let selected = null;
let generation = 0;

function query(from) {
  const params = new URLSearchParams({ limit: '20' });
  if (filter.value) params.set('status', filter.value);
  if (from) params.set('cursor', from);
  return 'api/v2/jobs?' + params;
}

function summary(job) {
  if (isActive(job)) {
    const bar = job.status === 'running' && job.progress ? h('progress', { max: 1, value: job.progress.value }) : null;
    return [bar, h('span', {}, progressText(job))];
  }
  if (job.error) return [h('span', {}, job.error.code + (job.error.node_id ? ' in node ' + job.error.node_id : '') + ': ' + job.error.message)];
  const parts = [];
  if (job.outputs.length > 0) parts.push(job.outputs.length + (job.outputs.length === 1 ? ' output' : ' outputs'));
  if (job.metrics && job.metrics.execution_ms !== null) parts.push('ran ' + fmtMs(job.metrics.execution_ms));
  return [h('span', {}, parts.join(' · '))];
}

function render(li, job) {
  li.className = 'job' + (job.id === selected ? ' selected' : '');
  li.dataset.status = job.status;
  li.replaceChildren(
    h('a', { href: '#job=' + encodeURIComponent(job.id) },
      statusBadge(job.status),
      // The id's end: its first digits are the time it was made (a UUIDv7), the same for every job of a minute.
      h('code', { class: 'job-id', title: job.id }, job.id.slice(-8)),
      h('span', { class: 'when' }, fmtTime(job.created_at)),
      h('span', { class: 'line' }, summary(job)),
    ),
  );
}

function rowFor(id) {
  let li = rows.get(id);
  if (!li) {
    li = h('li', { data: { id } });
    rows.set(id, li);
    render(li, getJob(id));
  }
  return li;
}

onChange((job) => {
  const li = rows.get(job.id);
  if (li) render(li, job);
});

function followShown() {
  for (const id of rows.keys()) if (isActive(getJob(id))) follow(id, false);
}

function showPage(page, replace) {
  if (replace) { list.replaceChildren(); rows.clear(); }
  for (const job of page.jobs) { putJob(job); list.append(rowFor(job.id)); }
  cursor = page.next_cursor;
  more.hidden = !cursor;
  empty.hidden = rows.size > 0;
  followShown();
}

/** Reads the first page again, replacing the list (a new filter, a new key). */
export async function loadJobs() {
  const mine = ++generation;
  const page = await getJson(query(null));
  if (mine === generation) showPage(page, true);
}

/** Reads the first page and merges it: jobs change in place, new ones go on top. */
export async function pollJobs() {
  const mine = generation;
  const page = await getJson(query(null));
  if (mine !== generation) return;
  const top = list.firstChild;
  for (const job of page.jobs) {
    putJob(job);
    if (!rows.has(job.id)) list.insertBefore(rowFor(job.id), top);
  }
  empty.hidden = rows.size > 0;
  followShown();
}

/** Whether a shown job is queued or running with no stream following it. */
export const needsPolling = () => [...rows.keys()].some((id) => isActive(getJob(id)) && !isFollowed(id));

/** A job just submitted here: on top, whatever the filter. */
export function addJob(job) {
  putJob(job);
  list.prepend(rowFor(job.id));
  empty.hidden = true;
  follow(job.id, true);
}

export function markSelected(id) {
  selected = id;
  for (const [rowId, li] of rows) li.classList.toggle('selected', rowId === id);
}

export function initJobs(onError) {
  filter.addEventListener('change', () => loadJobs().catch(onError));
  document.getElementById('refresh').addEventListener('click', () => loadJobs().catch(onError));
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const mine = generation;
      const page = await getJson(query(cursor));
      if (mine === generation) showPage(page, false);
    } catch (err) {
      onError(err);
    } finally {
      more.disabled = false;
    }
  });
}
`;
