// The dashboard's HTML: a static shell (no data in it, nothing inline to run)
// that the style sheet and the script modules under dashboard/ fill in.
// References are relative, so the page works under any mount prefix; when
// the service knows its prefix, a <base> makes `/graph` (no slash) resolve
// them as `/graph/` does.

const ATTRIBUTE_ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;', "'": '&#39;' };

/** The statuses a job can be listed by (expired jobs are never listed). */
const FILTERS = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled'];

/** The page for a service mounted under `prefix` ('' at the root, else '/a/b'). */
export function dashboardPage(prefix: string): string {
  // A prefix is a path, but may hold any character a path may: escaped for the attribute.
  const base = prefix === '' ? '' : `\n<base href="${`${prefix}/`.replace(/[&"<>']/g, (c) => ATTRIBUTE_ESCAPES[c])}">`;
  const options = FILTERS.map((s) => `<option value="${s}">${s}</option>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>graphrun</title>${base}
<link rel="icon" href="data:,">
<link rel="stylesheet" href="dashboard/style.css">
<script type="module" src="dashboard/app.js"></script>
</head>
<body>
<header class="bar">
  <h1>graphrun</h1>
  <form id="key-form" class="credential" autocomplete="off">
    <label for="key">API key</label>
    <input id="key" type="password" placeholder="none" spellcheck="false">
    <button type="submit">Use key</button>
    <button type="button" id="key-forget" class="quiet">Forget</button>
  </form>
  <details id="operator-box">
    <summary>Operator</summary>
    <form id="operator-form" class="credential" autocomplete="off">
      <label for="operator-token">Operator token</label>
      <input id="operator-token" type="password" placeholder="none" spellcheck="false">
      <button type="submit">Use token</button>
    </form>
    <p id="operator-hint" class="muted"></p>
  </details>
</header>
<div id="notice" role="alert" hidden></div>
<main>
  <section id="ops" class="panel" hidden aria-label="Fleet">
    <h2>Fleet</h2>
    <div id="ops-body"></div>
  </section>
  <section id="jobs-panel" class="panel" aria-label="Jobs">
    <div class="panel-head">
      <h2>Jobs</h2>
      <select id="status-filter" aria-label="Status"><option value="">all statuses</option>${options}</select>
      <button type="button" id="refresh" class="quiet">Refresh</button>
    </div>
    <ol id="jobs"></ol>
    <p id="jobs-empty" class="muted" hidden>No jobs yet.</p>
    <button type="button" id="more" class="quiet" hidden>Load more</button>
  </section>
  <section id="detail" class="panel" aria-label="Job">
    <p class="muted">Select a job to see its workflow, error and outputs.</p>
  </section>
  <section id="submit-panel" class="panel" aria-label="Submit a workflow">
    <h2>Submit a workflow</h2>
    <form id="submit-form">
      <textarea id="workflow" rows="9" spellcheck="false" placeholder='{"1": {"class_type": "...", "inputs": {...}}} or {"workflow": {...}, "priority": 0}'></textarea>
      <div class="row">
        <input id="workflow-file" type="file" accept=".json,application/json" aria-label="Workflow file">
        <button type="submit">Submit</button>
      </div>
    </form>
    <div id="submit-result" aria-live="polite"></div>
  </section>
  <section id="upload-panel" class="panel" aria-label="Upload an asset">
    <h2>Upload an asset</h2>
    <form id="upload-form" class="row">
      <input id="asset-file" type="file" required aria-label="Asset file">
      <button type="submit">Upload</button>
    </form>
    <div id="upload-result" aria-live="polite"></div>
  </section>
</main>
</body>
</html>
`;
}
