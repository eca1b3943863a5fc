// urlPath / urlOrigin (core/http/links.ts): what `new URL(url)` gives for the
// path and origin of a request's URL, without parsing it again.
import { describe, expect, it } from 'vitest';
import { urlOrigin, urlPath } from '../core/http/links.ts';

const URLS = [
  'http://127.0.0.1:8189/api/v2/jobs/abc',
  'http://localhost/',
  'https://example.com/a/b/?x=1&y=/z#frag/x',
  'http://example.com:80/default-port',
  'https://EXAMPLE.com:443/a%20b/%2F?q#',
  'http://[::1]:3000/api?x=@y',
  'http://host/a#b?c',
  'http://host/a?b#c',
  'http://host/a/@b',
  'http://host',
  'file:///tmp/x',
  'blob:https://example.com/1234',
  'custom-scheme://host/path?q',
];

describe('urlPath and urlOrigin', () => {
  it.each(URLS)('match new URL() for the serialized form of %s', (raw) => {
    // request.url is always the serialized form.
    const url = new URL(raw).href;
    expect(urlPath(url)).toBe(new URL(url).pathname);
    expect(urlOrigin(url)).toBe(new URL(url).origin);
  });

  it('read the path of a Request as the router needs it', () => {
    const request = new Request('http://Example.COM:80/api/v2/jobs/%7Eid?x=/y');
    expect(request.url).toBe('http://example.com/api/v2/jobs/%7Eid?x=/y');
    expect(urlPath(request.url)).toBe('/api/v2/jobs/%7Eid');
    expect(urlOrigin(request.url)).toBe('http://example.com');
  });
});
