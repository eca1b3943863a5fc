// The dashboard's style sheet (dashboard/style.css): system fonts, a light
// and a dark scheme, a grid of panels that folds to one column on narrow
// screens. Nothing is loaded from elsewhere.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const DASHBOARD_STYLE = String.raw`
:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --panel: #fff; --text: #1d2430; --muted: #667085; --line: #dfe3ea;
  --accent: #2f6fed; --ok: #12805c; --bad: #c4320a; --warn: #b54708; --run: #2f6fed; --code: #f0f2f5;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #101319; --panel: #181c24; --text: #e6e9ef; --muted: #98a2b3; --line: #2a303c; --code: #11151c; --accent: #6c9bff; --run: #6c9bff; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
h1 { font-size: 18px; margin: 0 16px 0 0; letter-spacing: .02em; }
h2 { font-size: 15px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 14px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, pre, textarea, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: var(--code); border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow: auto; max-height: 360px; margin: 0; }
button, select, input, textarea { font: inherit; color: inherit; }
button { background: var(--accent); color: #fff; border: 0; border-radius: 6px; padding: 6px 12px; cursor: pointer; }
button.quiet { background: transparent; color: var(--accent); border: 1px solid var(--line); }
button.danger { background: var(--bad); }
button:disabled { opacity: .5; cursor: default; }
input[type=password], input[type=text], select, textarea { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 5px 8px; }
textarea { width: 100%; resize: vertical; }
a { color: var(--accent); }
[hidden] { display: none !important; }
.muted { color: var(--muted); }
.row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-top: 8px; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 12px; padding: 10px 20px; background: var(--panel); border-bottom: 1px solid var(--line); }
.credential { display: flex; gap: 6px; align-items: center; }
.credential label { color: var(--muted); }
#operator-box { margin-left: auto; }
#operator-box summary { cursor: pointer; color: var(--muted); }
#operator-box[open] { padding-bottom: 4px; }
#operator-hint { margin: 4px 0 0; font-size: 12px; }
#notice { margin: 12px 20px 0; padding: 10px 14px; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); }
#notice.error { border-color: var(--bad); color: var(--bad); }
#notice.ok { border-color: var(--ok); color: var(--ok); }
main { display: grid; grid-template-columns: minmax(300px, 2fr) 3fr; grid-template-areas: "ops ops" "jobs detail" "submit upload"; gap: 16px; padding: 16px 20px 32px; align-items: start; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; grid-template-areas: "ops" "jobs" "detail" "submit" "upload"; } }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
#ops { grid-area: ops; } #jobs-panel { grid-area: jobs; } #detail { grid-area: detail; } #submit-panel { grid-area: submit; } #upload-panel { grid-area: upload; }
.panel-head { display: flex; align-items: center; gap: 8px; margin-bottom: 8px; }
.panel-head h2 { margin: 0 auto 0 0; }
#jobs { list-style: none; margin: 0; padding: 0; max-height: 560px; overflow: auto; }
.job a { display: grid; grid-template-columns: auto 1fr auto; gap: 2px 10px; align-items: center; padding: 8px; border-radius: 6px; color: inherit; text-decoration: none; border: 1px solid transparent; }
.job a:hover { background: var(--code); }
.job.selected a { border-color: var(--accent); background: var(--code); }
.job .when { color: var(--muted); font-size: 12px; text-align: right; }
.job .line { grid-column: 2 / 4; color: var(--muted); font-size: 12px; display: flex; gap: 8px; align-items: center; min-width: 0; }
.job .line span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
progress { width: 120px; height: 8px; accent-color: var(--run); flex: none; }
.badge { display: inline-block; min-width: 72px; text-align: center; font-size: 11.5px; font-weight: 600; padding: 1px 8px; border-radius: 999px; border: 1px solid currentColor; text-transform: uppercase; letter-spacing: .03em; }
.s-queued, .s-canceling { color: var(--warn); } .s-running { color: var(--run); } .s-succeeded, .b-ok { color: var(--ok); }
.s-failed, .b-bad { color: var(--bad); } .s-canceled, .s-expired { color: var(--muted); }
.detail-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.detail-head h2 { margin: 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 10px 0 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.error-box { border: 1px solid var(--bad); border-radius: 6px; padding: 10px 12px; margin-top: 12px; }
.error-box .code { color: var(--bad); font-weight: 600; }
.error-box p { margin: 4px 0; }
.outputs { display: flex; flex-wrap: wrap; gap: 12px; }
figure.output { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px; max-width: 100%; }
figure.output img, figure.output video { display: block; height: 200px; width: auto; max-width: 100%; object-fit: contain; background: repeating-conic-gradient(var(--code) 0 25%, transparent 0 50%) 0 0 / 16px 16px; }
figure.output figcaption { margin-top: 6px; font-size: 12px; display: flex; gap: 8px; flex-wrap: wrap; }
img.live-preview { max-width: 240px; max-height: 240px; border: 1px dashed var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 10px 4px 0; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 500; font-size: 12px; }
.ops-grid { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
@media (max-width: 900px) { .ops-grid { grid-template-columns: 1fr; } }
.ops-summary { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin: 0 0 10px; }
.result { margin-top: 10px; }
.result.error { color: var(--bad); }
.assets { list-style: none; padding: 0; margin: 10px 0 0; display: grid; gap: 8px; }
.assets li { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.assets code { word-break: break-all; }
`;
