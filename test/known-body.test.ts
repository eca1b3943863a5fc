// adapters/node/known-body.ts: deferredJsonResponse is Response.json with its
// body known as text and no stream made until JavaScript reads it; the core's
// jsonResponse uses it for the requests of an adapter that gives it.
import { describe, expect, it } from 'vitest';
import { deferredJsonResponse, knownBody } from '../adapters/node/known-body.ts';
import { jsonResponse as coreJson, setRequestOptions } from '../core/http/request-options.ts';

const jsonResponse = (value: unknown, init?: ResponseInit) => deferredJsonResponse(value, init);

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

  it('knows the serialized body, and the stream still carries the same bytes', async () => {
    const res = jsonResponse({ hello: 'wörld' });
    expect(knownBody(res)).toBe('{"hello":"wörld"}');
    expect(new TextDecoder().decode(await res.arrayBuffer())).toBe(knownBody(res));
  });

  it('keeps a content-type the caller gave, in any case', async () => {
    const res = jsonResponse({ a: 1 }, { headers: { 'Content-Type': 'application/problem+json' } });
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it('takes headers as a record, a Headers object or pairs, like Response.json', () => {
    const inits: ResponseInit['headers'][] = [
      undefined,
      { 'X-A': '1' },
      { 'CONTENT-TYPE': 'text/plain', 'X-A': '1' },
      new Headers({ 'x-a': '1' }),
      new Headers({ 'content-type': 'text/plain' }),
      [
        ['X-A', '1'],
        ['X-A', '2'],
      ],
    ];
    for (const headers of inits) {
      expect([...jsonResponse(1, { headers }).headers]).toEqual([...Response.json(1, { headers }).headers]);
    }
    // The record given is not changed.
    const record = { 'X-A': '1' };
    jsonResponse(1, { headers: record });
    expect(record).toEqual({ 'X-A': '1' });
  });

  it('knows nothing of other responses, and refuses what has no JSON form', () => {
    expect(knownBody(Response.json({ a: 1 }))).toBeUndefined();
    expect(knownBody(new Response('x'))).toBeUndefined();
    expect(() => jsonResponse(undefined)).toThrow(TypeError);
  });
});

describe("the core's jsonResponse for a request whose adapter builds JSON itself", () => {
  const accepted = () => {
    const request = new Request('http://x/');
    setRequestOptions(request, { jsonResponse: deferredJsonResponse });
    return request;
  };

  it('is a Response like any other to JavaScript: status, headers, readers, body stream, clone', async () => {
    const value = { a: 'é', n: [1, 2] };
    const init = { status: 202, statusText: 'Later', headers: { 'X-One': '1' } };
    const res = coreJson(accepted(), value, init);
    const plain = Response.json(value, init);
    expect(res).toBeInstanceOf(Response);
    expect([res.status, res.statusText, res.ok]).toEqual([plain.status, plain.statusText, plain.ok]);
    expect([...res.headers]).toEqual([...plain.headers]);
    expect(knownBody(res)).toBe(JSON.stringify(value));
    expect(res.bodyUsed).toBe(false);
    const copy = res.clone();
    expect(knownBody(copy)).toBe(knownBody(res));
    expect(await copy.json()).toEqual(value);
    expect(new TextDecoder().decode(await new Response(res.body).arrayBuffer())).toBe(JSON.stringify(value));
    expect(res.bodyUsed).toBe(true);
    expect(() => res.clone()).toThrow(TypeError);
    await expect(res.text()).rejects.toThrow(TypeError);
    const again = coreJson(accepted(), value, init);
    expect(await again.text()).toBe(JSON.stringify(value));
    expect(
      await coreJson(accepted(), value, init)
        .blob()
        .then((b) => b.text()),
    ).toBe(JSON.stringify(value));
  });

  it('is an ordinary Response when the adapter gave no builder', async () => {
    const res = coreJson(new Request('http://x/'), { a: 1 }, {});
    expect(Object.getPrototypeOf(res) === Response.prototype).toBe(true);
    expect(await res.json()).toEqual({ a: 1 });
  });
});
