// dashboard/sse.js: Server-Sent Events read through fetch, so the request
// carries the Authorization header (EventSource cannot send one). Parsed as
// the HTML standard says: lines end in CRLF, LF or CR; a blank line
// dispatches; ':' lines are comments; one space after the colon is dropped.
export const SSE_SCRIPT = String.raw`
import { call } from './api.js';

/** Calls onEvent(type, data) per event until the stream ends; rejects with the ApiError of a refused request. */
export async function readEvents(path, onEvent, signal) {
  const res = await call(path, { signal, headers: { Accept: 'text/event-stream' }, cache: 'no-store' });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let type = '';
  let data = [];
  const line = (text) => {
    if (text === '') {
      if (data.length > 0) onEvent(type || 'message', data.join('\n'));
      type = '';
      data = [];
      return;
    }
    if (text[0] === ':') return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (;;) {
        const end = buffer.search(/[\r\n]/);
        // A CR last in the chunk may be the first half of a CRLF: wait for the next one.
        if (end === -1 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
        line(buffer.slice(0, end));
        buffer = buffer.slice(end + (buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1));
      }
    }
    if (buffer.endsWith('\r')) line(buffer.slice(0, -1));
  } finally {
    reader.cancel().catch(() => {});
  }
}
`;
