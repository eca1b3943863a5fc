// dashboard/dom.js: DOM built from data without ever parsing it as HTML
// (text goes in as text nodes, attributes as properties), the notice line,
// and how times, sizes, statuses and progress read.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const DOM_SCRIPT = String.raw`
/** h('a', { href, class: 'x', onclick }, 'text', child): an element; strings become text nodes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = value;
    else if (name === 'data') Object.assign(el.dataset, value);
    else if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name in el) el[name] = value;
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) el.append(child instanceof Node ? child : String(child));
  return el;
}

const STATUSES = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled', 'expired'];

export function statusBadge(status) {
  const known = STATUSES.includes(status);
  return h('span', { class: 'badge status ' + (known ? 's-' + status : 's-unknown') }, String(status));
}

export function badge(text, good) {
  return h('span', { class: 'badge ' + (good ? 'b-ok' : 'b-bad') }, text);
}

export function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString();
}

export function fmtMs(ms) {
  if (typeof ms !== 'number') return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

export function fmtBytes(n) {
  if (typeof n !== 'number') return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
}

/** One line for a job's progress: queue position, node x of y, step, message. */
export function progressText(job) {
  if (job.status === 'queued') return job.queue_position === null || job.queue_position === undefined ? 'queued' : 'queued, ' + job.queue_position + ' ahead';
  const p = job.progress;
  if (!p) return job.status === 'running' ? 'starting' : '';
  const parts = ['node ' + Math.min(p.nodes_done + 1, p.nodes_total) + ' of ' + p.nodes_total];
  if (p.current_node_class) parts.push(p.current_node_class);
  if (p.steps) parts.push('step ' + p.step + '/' + p.steps);
  // The engine's message mostly repeats the node and step: shown only when it says more.
  if (p.message && !p.steps && p.message !== p.current_node_class) parts.push(p.message);
  return parts.join(' · ');
}

const notice = document.getElementById('notice');
/** Shows a message above the panels ('error' or 'ok'); an empty text hides it. */
export function notify(text, kind) {
  notice.textContent = text || '';
  notice.className = kind || '';
  notice.hidden = !text;
}

/** An ApiError (or anything thrown) as "code: message". */
export function describe(err) {
  if (err && err.code) return err.code + ': ' + err.message;
  return String((err && err.message) || err);
}
`;
