// core/known-body.ts: jsonResponse is Response.json plus a remembered body.
import { describe, expect, it } from 'vitest';
import { jsonResponse, knownBody } from '../core/known-body.ts';

describe('jsonResponse', () => {
  it('answers like Response.json: status, headers, body', async () => {
    const value = { a: 1, s: 'ünïcødé ✓', list: [null, true], nested: { x: 'y' } };
    const init = { status: 201, statusText: 'Made', headers: { 'Cache-Control': 'no-store', 'X-Two': '2' } };
    const ours = jsonResponse(value, init);
    const theirs = Response.json(value, init);
    expect(ours.status).toBe(theirs.status);
    expect(ours.statusText).toBe(theirs.statusText);
    expect([...ours.headers]).toEqual([...theirs.headers]);
    expect(await ours.text()).toBe(await theirs.text());
  });

  it('remembers the serialized body, and the stream still carries the same bytes', async () => {
    const res = jsonResponse({ hello: 'wörld' });
    expect(knownBody(res)).toBe('{"hello":"wörld"}');
    expect(new TextDecoder().decode(await res.arrayBuffer())).toBe(knownBody(res));
  });

  it('keeps a content-type the caller gave, in any case', async () => {
    const res = jsonResponse({ a: 1 }, { headers: { 'Content-Type': 'application/problem+json' } });
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it('knows nothing of other responses, and refuses what has no JSON form', () => {
    expect(knownBody(Response.json({ a: 1 }))).toBeUndefined();
    expect(knownBody(new Response('x'))).toBeUndefined();
    expect(() => jsonResponse(undefined)).toThrow(TypeError);
  });
});
