// dashboard/previews.js: an output's preview by its type (img, video, audio,
// the start of a text), with a download link. With a key set the bytes are
// fetched with it into a blob: URL (a media element cannot send the header);
// without one the element loads the content URL itself, ranges and all.
export const PREVIEWS_SCRIPT = String.raw`
import { apiUrl, call, contentPath, getKey } from './api.js';
import { describe, fmtBytes, h } from './dom.js';

const TEXT_PREVIEW_CHARS = 20000;
let urls = [];
let generation = 0;

/** Frees the blob: URLs of the previews shown so far (another job was opened). */
export function releasePreviews() {
  generation++;
  for (const url of urls) URL.revokeObjectURL(url);
  urls = [];
}

async function sourceOf(output) {
  if (!getKey()) return apiUrl(contentPath(output.id));
  const mine = generation;
  const blob = await (await call(contentPath(output.id))).blob();
  const url = URL.createObjectURL(blob);
  if (mine === generation) urls.push(url);
  else URL.revokeObjectURL(url);
  return url;
}

function mediaFor(output) {
  if (output.type === 'image') return h('img', { alt: output.name || 'image output' });
  if (output.type === 'video') return h('video', { controls: true, loop: true, muted: true, playsInline: true, preload: 'metadata' });
  if (output.type === 'audio') return h('audio', { controls: true, preload: 'metadata' });
  return null;
}

export function outputCard(output) {
  const media = mediaFor(output);
  const text = output.type === 'text' ? h('pre', { class: 'output-text' }, '…') : null;
  const link = h('a', { class: 'download', download: output.name || output.id }, 'download');
  const note = h('span', { class: 'muted' });
  const card = h('figure', { class: 'output', data: { outputId: output.id, type: output.type } },
    media || text || h('p', { class: 'muted' }, output.type + ' output'),
    h('figcaption', {},
      h('span', { class: 'mono' }, output.node_id + ' · ' + output.name),
      h('span', { class: 'muted' }, output.content_type + ', ' + fmtBytes(output.size_bytes)),
      link,
      note,
    ),
  );
  if (text) {
    call(contentPath(output.id)).then((res) => res.text()).then((body) => {
      text.textContent = body.length > TEXT_PREVIEW_CHARS ? body.slice(0, TEXT_PREVIEW_CHARS) + '\n…' : body;
    }).catch((err) => { text.textContent = 'Not readable: ' + describe(err); });
  }
  sourceOf(output).then((src) => {
    if (media) media.src = src;
    link.href = src;
  }).catch((err) => { note.textContent = 'preview failed: ' + describe(err); });
  return card;
}
`;
