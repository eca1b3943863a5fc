// dashboard/submit.js: submitting a workflow pasted or read from a file. A
// bare graph (nodes keyed by id) is wrapped as {workflow}; a whole
// submission ({workflow, priority, metadata, ...}) is sent as it is. A
// refusal shows its code, message and the nodes it names.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const SUBMIT_SCRIPT = String.raw`
import { postJson } from './api.js';
import { describe, h } from './dom.js';

const form = document.getElementById('submit-form');
const text = document.getElementById('workflow');
const file = document.getElementById('workflow-file');
const result = document.getElementById('submit-result');

function say(kind, ...children) {
  result.replaceChildren(h('div', { class: 'result ' + kind }, ...children));
}

function nodeErrors(details) {
  const errors = details && details.node_errors;
  if (!errors || typeof errors !== 'object') return null;
  const items = [];
  for (const [node, list] of Object.entries(errors)) {
    for (const e of Array.isArray(list) ? list : [list]) items.push(h('li', {}, h('code', {}, node), ' ', (e && (e.message || e.reason)) || JSON.stringify(e)));
  }
  return items.length > 0 ? h('ul', {}, items) : null;
}

function bodyOf(parsed) {
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(parsed)) throw new Error('The workflow must be a JSON object of nodes keyed by id.');
  return isObject(parsed.workflow) ? parsed : { workflow: parsed };
}

/** onSubmitted(job) runs with each job the service accepted. */
export function initSubmit(onSubmitted) {
  file.addEventListener('change', async () => {
    const chosen = file.files && file.files[0];
    if (chosen) text.value = await chosen.text();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let body;
    try {
      body = bodyOf(JSON.parse(text.value));
    } catch (err) {
      return say('error', err instanceof SyntaxError ? 'Not valid JSON: ' + err.message : err.message);
    }
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const job = await postJson('api/v2/jobs', body);
      say('ok', 'Submitted job ', h('code', { class: 'submitted-id' }, job.id), '.');
      onSubmitted(job);
    } catch (err) {
      say('error', describe(err), nodeErrors(err.details));
    } finally {
      button.disabled = false;
    }
  });
}
`;
