// dashboard/detail.js: one job: status and timing, progress and the live
// preview while it runs, its error when it failed, its outputs' previews,
// a cancel button while it can be canceled, and the workflow it ran as
// pretty JSON. Kept current by the store, which the job's stream feeds.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const DETAIL_SCRIPT = String.raw`
import { getJson, jobPath, postJson } from './api.js';
import { describe, fmtMs, fmtTime, h, notify, progressText, statusBadge } from './dom.js';
import { follow } from './live.js';
import { outputCard, releasePreviews } from './previews.js';
import { getJob, isActive, onChange, putJob } from './store.js';

const panel = document.getElementById('detail');
let view = null;

function facts(job) {
  const rows = [
    ['Created', fmtTime(job.created_at)],
    ['Started', fmtTime(job.started_at)],
    ['Completed', fmtTime(job.completed_at)],
    ['Waited', job.metrics ? fmtMs(job.metrics.queue_ms) : ''],
    ['Ran', job.metrics ? fmtMs(job.metrics.execution_ms) : ''],
    ['Priority', String(job.priority)],
    ['Kept until', fmtTime(job.expires_at)],
  ];
  if (job.outputs_reused) rows.push(['Cache', 'some nodes reused earlier results']);
  if (job.metadata) rows.push(['Metadata', JSON.stringify(job.metadata)]);
  return rows.filter(([, v]) => v).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]);
}

function errorBox(error) {
  const where = [error.node_id && 'node ' + error.node_id, error.class_type, error.exception_type].filter(Boolean).join(' · ');
  return h('div', { class: 'error-box' },
    h('p', {}, h('span', { class: 'code error-code' }, error.code), where ? h('span', { class: 'muted error-node' }, ' ' + where) : null),
    h('p', { class: 'error-message' }, error.message),
    error.traceback ? h('details', {}, h('summary', {}, 'Traceback'), h('pre', {}, error.traceback)) : null,
  );
}

async function cancel() {
  const id = view.id;
  view.cancel.disabled = true;
  try {
    putJob(await postJson(jobPath(id) + '/cancel'));
  } catch (err) {
    notify('Could not cancel: ' + describe(err), 'error');
    if (view && view.id === id) view.cancel.disabled = false;
  }
}

function update(job) {
  const v = view;
  v.status.replaceChildren(statusBadge(job.status));
  v.facts.replaceChildren(...facts(job));
  const active = isActive(job);
  v.cancel.hidden = !(job.status === 'queued' || job.status === 'running');
  v.progress.hidden = !active;
  if (active) {
    v.progress.replaceChildren(
      job.status === 'running' && job.progress ? h('progress', { max: 1, value: job.progress.value }) : null,
      h('span', { class: 'muted' }, ' ' + progressText(job)),
    );
  }
  const preview = active && job.live_preview;
  v.preview.hidden = !preview;
  if (preview) v.preview.src = 'data:' + preview.content_type + ';base64,' + preview.data_base64;
  v.error.replaceChildren(job.error ? errorBox(job.error) : '');
  for (const output of job.outputs) {
    if (v.shown.has(output.id)) continue;
    v.shown.add(output.id);
    v.outputs.append(outputCard(output));
  }
  v.outputsHead.hidden = job.outputs.length === 0;
}

onChange((job) => { if (view && job.id === view.id) update(job); });

/** The id of the job on show, or null. */
export const shownJobId = () => (view ? view.id : null);

export function closeJob() {
  releasePreviews();
  view = null;
  panel.replaceChildren(h('p', { class: 'muted' }, 'Select a job to see its workflow, error and outputs.'));
}

export async function openJob(id) {
  releasePreviews();
  const v = (view = {
    id,
    shown: new Set(),
    status: h('span', { class: 'detail-status' }),
    cancel: h('button', { type: 'button', class: 'danger', hidden: true, onclick: cancel }, 'Cancel'),
    facts: h('dl', { class: 'facts' }),
    progress: h('div', { class: 'row detail-progress', hidden: true }),
    preview: h('img', { class: 'live-preview', alt: 'live preview', hidden: true }),
    error: h('div', { class: 'detail-error' }),
    outputsHead: h('h3', { hidden: true }, 'Outputs'),
    outputs: h('div', { class: 'outputs' }),
    workflow: h('pre', { class: 'workflow' }, 'Loading…'),
  });
  panel.replaceChildren(
    h('div', { class: 'detail-head' }, h('h2', {}, 'Job'), h('code', { class: 'detail-id' }, id), v.status, v.cancel),
    v.facts, v.progress, v.preview, v.error, v.outputsHead, v.outputs,
    h('h3', {}, 'Workflow'), v.workflow,
  );
  const known = getJob(id);
  if (known) update(known);
  try {
    const job = putJob(await getJson(jobPath(id)));
    if (view !== v) return;
    update(job);
    follow(id, true);
  } catch (err) {
    if (view !== v) return;
    panel.replaceChildren(h('p', { class: 'result error' }, err.status === 404 ? 'No job ' + id + ': it does not exist, is not yours, or has expired.' : describe(err)));
    return;
  }
  getJson(jobPath(id) + '/workflow').then((body) => {
    if (view === v) v.workflow.textContent = JSON.stringify(body.workflow, null, 2);
  }).catch((err) => {
    if (view === v) v.workflow.textContent = 'The workflow could not be read: ' + describe(err);
  });
}
`;
