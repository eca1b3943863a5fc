// dashboard/app.js, the page's entry: the key and operator-token fields, the
// notice that asks for a key when the service answers 401, the job shown by
// the address's #job=<id>, and the wiring of the list, the detail, the forms
// and the operator panel.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const APP_SCRIPT = String.raw`
import { getKey, getOperatorToken, onUnauthorized, setKey, setOperatorToken } from './api.js';
import { closeJob, openJob, shownJobId } from './detail.js';
import { describe, notify } from './dom.js';
import { addJob, initJobs, loadJobs, markSelected, needsPolling, pollJobs } from './jobs.js';
import { follow, unfollowAll } from './live.js';
import { refreshOps } from './ops.js';
import { clearJobs } from './store.js';
import { initSubmit } from './submit.js';
import { initUpload } from './upload.js';

const keyInput = document.getElementById('key');
const operatorInput = document.getElementById('operator-token');
let locked = false;

onUnauthorized(() => {
  locked = true;
  unfollowAll();
  notify(getKey() ? 'The service did not accept this API key. Check it and enter it again.' : 'This service needs an API key: enter it above and press Use key.', 'error');
  keyInput.focus();
});

function onError(err) {
  // A 401 already told the user what to do.
  if (err && err.status !== 401) notify(describe(err), 'error');
}

function route() {
  const m = /^#job=(.+)$/.exec(location.hash);
  const id = m ? decodeURIComponent(m[1]) : null;
  markSelected(id);
  if (id) openJob(id);
  else closeJob();
}

async function start() {
  locked = false;
  notify('');
  unfollowAll();
  clearJobs();
  try {
    await loadJobs();
    route();
  } catch (err) {
    onError(err);
  }
}

document.getElementById('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setKey(keyInput.value.trim());
  start();
});
document.getElementById('key-forget').addEventListener('click', () => {
  setKey('');
  keyInput.value = '';
  start();
});
document.getElementById('operator-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setOperatorToken(operatorInput.value.trim());
  refreshOps();
});
window.addEventListener('hashchange', route);
// A hidden tab gives its streams back: connections to a host are few, and other tabs may need them.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') return unfollowAll();
  if (locked) return;
  const shown = shownJobId();
  if (shown) follow(shown, true);
  pollJobs().catch(() => {});
});

initJobs(onError);
initSubmit((job) => {
  addJob(job);
  location.hash = 'job=' + encodeURIComponent(job.id);
});
initUpload();

// Jobs no stream follows (and jobs submitted elsewhere) are caught by reading the list again.
function poll() {
  setTimeout(async () => {
    if (!locked && document.visibilityState !== 'hidden') await pollJobs().catch(() => {});
    poll();
  }, needsPolling() ? 3000 : 15000);
}

keyInput.value = getKey();
operatorInput.value = getOperatorToken();
if (getOperatorToken()) document.getElementById('operator-box').open = true;
start();
refreshOps();
poll();
`;
