// dashboard/upload.js: uploading a file as an asset, then showing its id,
// name and the reference a workflow input takes ({"__type": "core/ASSET",
// "info": {"id": ...}}), with a button that copies it.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const UPLOAD_SCRIPT = String.raw`
import { getJson } from './api.js';
import { describe, fmtBytes, h } from './dom.js';

const form = document.getElementById('upload-form');
const input = document.getElementById('asset-file');
const result = document.getElementById('upload-result');
const uploaded = h('ul', { class: 'assets' });

function copyButton(text) {
  const button = h('button', { type: 'button', class: 'quiet' }, 'Copy reference');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select and copy it by hand';
    }
  });
  return button;
}

function shown(asset) {
  const reference = JSON.stringify({ __type: 'core/ASSET', info: { id: asset.id } });
  return h('li', { data: { assetId: asset.id } },
    h('div', {}, h('strong', { class: 'asset-name' }, asset.file_path || '(no name)'), ' ',
      h('span', { class: 'muted' }, asset.content_type + ', ' + fmtBytes(asset.size_bytes) + (asset.created_new === false ? ', already stored' : ''))),
    h('div', {}, 'id ', h('code', { class: 'asset-id' }, asset.id)),
    h('div', { class: 'row' }, h('code', { class: 'asset-ref' }, reference), copyButton(reference)),
  );
}

export function initUpload() {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const file = input.files && input.files[0];
    if (!file) return;
    const data = new FormData();
    data.append('content_type', file.type || 'application/octet-stream');
    data.append('file_path', file.name);
    data.append('file', file, file.name);
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const asset = await getJson('api/v2/assets', { method: 'POST', body: data });
      uploaded.prepend(shown(asset));
      result.replaceChildren(uploaded);
      form.reset();
    } catch (err) {
      result.replaceChildren(h('div', { class: 'result error' }, 'Upload failed: ' + describe(err)), uploaded);
    } finally {
      button.disabled = false;
    }
  });
}
`;
