// dashboard/ops.js: the operator's panel, from GET ops/status (sent with the
// operator token when one is set, never with the account's key): readiness,
// queue depth per tier and the engine's servers. Shown only while that
// answers 200, and read again every few seconds while it does.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const OPS_SCRIPT = String.raw`
import { getJson, getOperatorToken } from './api.js';
import { badge, describe, h } from './dom.js';

const panel = document.getElementById('ops');
const body = document.getElementById('ops-body');
const hint = document.getElementById('operator-hint');
const REFRESH_MS = 5000;
let timer = null;
let generation = 0;

const cell = (value) => h('td', {}, value === null || value === undefined ? '–' : String(value));

function table(heads, rows, empty) {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  return h('table', {}, h('thead', {}, h('tr', {}, heads.map((x) => h('th', {}, x)))), h('tbody', {}, rows));
}

/** The deployment this page's service is, and its condition (a stopped one answers no API request). */
function deploymentText(d) {
  if (!d) return '';
  return h('span', { class: 'deployment' }, 'deployment ', h('strong', {}, String(d.id)), ': ', badge(String(d.state).replace('_', ' '), d.state === 'ready'), d.detail ? ' (' + d.detail + ')' : '');
}

function render(status) {
  const engine = status.engine || {};
  const readiness = engine.readiness || {};
  const instance = status.instance || {};
  const queues = Array.isArray(status.queues) ? status.queues : [];
  const servers = Array.isArray(engine.servers) ? engine.servers : [];
  body.replaceChildren(
    h('p', { class: 'ops-summary' },
      badge(status.ready ? 'ready' : 'not ready', !!status.ready),
      deploymentText(status.deployment),
      h('span', {}, 'engine ', h('strong', {}, String(engine.name || '?')), ': ' + (readiness.state || '?') + (readiness.detail ? ' (' + readiness.detail + ')' : '')),
      h('span', { class: 'muted' },
        'this instance: ' + (instance.run_jobs === false ? 'API only, runs no jobs' : 'runs jobs') + ', ' + (instance.sse_streams ?? '–') + ' event streams, ' + (instance.websockets ?? '–') + ' WebSockets'),
    ),
    h('div', { class: 'ops-grid' },
      h('div', {}, h('h3', {}, 'Queues'), table(['Tier', 'Queued', 'Running', 'Oldest queued'],
        queues.map((q) => h('tr', { data: { tier: String(q.tier) } }, cell(q.tier), cell(q.queued), cell(q.running),
          cell(q.oldest_queued_seconds === null || q.oldest_queued_seconds === undefined ? null : Math.round(q.oldest_queued_seconds) + ' s'))),
        'No tiers.')),
      h('div', {}, h('h3', {}, 'Engine servers'), table(['Server', 'Health', 'Busy', 'Slots'],
        servers.map((s) => h('tr', { class: 'server' }, h('td', { class: 'mono' }, String(s.url)), h('td', {}, badge(s.healthy ? 'healthy' : 'down', !!s.healthy)), cell(s.busy), cell(s.slots))),
        'No engine servers: the engine runs in this process.')),
    ),
  );
}

/** Reads ops/status now (and keeps reading it while it answers). */
export async function refreshOps() {
  clearTimeout(timer);
  const mine = ++generation;
  const token = getOperatorToken();
  try {
    const status = await getJson('ops/status', { cache: 'no-store' }, token);
    if (mine !== generation) return;
    render(status);
    panel.hidden = false;
    hint.textContent = token ? 'Operator token in use.' : '';
    timer = setTimeout(refreshOps, REFRESH_MS);
  } catch (err) {
    if (mine !== generation) return;
    panel.hidden = true;
    if (err.status === 401 || err.status === 403) hint.textContent = token ? 'The operator token was not accepted.' : 'The fleet panel needs the operator token.';
    else if (err.status === 404) hint.textContent = 'This service has no operator status.';
    else {
      hint.textContent = 'Operator status unavailable: ' + describe(err);
      timer = setTimeout(refreshOps, REFRESH_MS * 3);
    }
  }
}
`;
