// A body parser in front of graphrun's mount (app.use(express.json())) that
// refuses a body: the answer is graphrun's own, in the error shape of the
// path's surface, never Express's HTML page; errors of the app's own routes
// and errors that are not a parser's stay the app's. With the parser only on
// the app's route (examples/express.ts), a body past its limit reaches
// graphrun whole.
import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { expectEnvelope } from './helpers/assets.ts';
import { type ExpressApp, startExpressApp } from './helpers/express-app.ts';
import { saveImageWorkflow } from './helpers/jobs.ts';
import { MULTIFRAME, multiframe, RED } from './helpers/video.ts';

/** Past express.json()'s default limit of 100 KB. */
const PAST_LIMIT = 150 * 1024;
const JSON_TYPE = { 'content-type': 'application/json' };

/** A workflow the service runs, made larger than the parser's limit by a long node title. */
const largeWorkflow = () => {
  const workflow: Record<string, unknown> = saveImageWorkflow(0x406080, 2, 2, 'large');
  workflow.e = { ...(workflow.e as object), _meta: { title: 'x'.repeat(PAST_LIMIT) } };
  return workflow;
};

async function jsonOf(res: Response): Promise<any> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

describe('express: a body parser before the mount refuses a body', () => {
  let app: ExpressApp;
  afterEach(() => app?.close());

  const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = JSON_TYPE) =>
    fetch(`${app.base}${path}`, { method: 'POST', headers, body });

  it("too large for the parser's limit: 413 in the v2 envelope, and in the cloud shape under /api", async () => {
    app = await startExpressApp({ before: [express.json()] });
    const v2 = await expectEnvelope(await post('/api/v2/jobs', JSON.stringify({ workflow: largeWorkflow() })), 413, 'payload_too_large');
    expect(v2.error.message).toMatch(/102400 bytes/);
    const cloud = await post('/api/prompt', JSON.stringify({ prompt: largeWorkflow() }));
    expect(cloud.status).toBe(413);
    expect(await jsonOf(cloud)).toEqual({ code: 'payload_too_large', message: expect.stringMatching(/102400 bytes/) });
  });

  it('malformed JSON: 400 in the cloud shape under /api, in the envelope under /api/v2', async () => {
    app = await startExpressApp({ before: [express.json()] });
    const cloud = await post('/api/prompt', '{"prompt":');
    expect(cloud.status).toBe(400);
    expect(await jsonOf(cloud)).toEqual({ code: 'malformed_request', message: expect.any(String) });
    await expectEnvelope(await post('/api/v2/jobs', '{"workflow":'), 400, 'malformed_request');
  });

  it("under /proxy: the video surface's {message, details}, the music surface's {detail}", async () => {
    app = await startExpressApp({ before: [express.json()] });
    // Key frames as a client sends them: base64 PNGs, here with filler past the limit.
    const frame = RED + 'A'.repeat(PAST_LIMIT);
    const video = await post(
      MULTIFRAME,
      JSON.stringify(
        multiframe({
          image_settings: [
            { key_image: frame, duration: 1 },
            { key_image: frame, duration: 1 },
          ],
        }),
      ),
    );
    // The video surface answers every size refusal with 400, as it does for its own limit.
    expect(video.status).toBe(400);
    expect(await jsonOf(video)).toEqual({ message: expect.stringMatching(/102400 bytes/), details: [] });
    const music = await post('/proxy/musicgen/t2m/generate', '{"prompt": nope}');
    expect(music.status).toBe(400);
    expect(await jsonOf(music)).toEqual({ detail: { code: 'bad_request', message: expect.any(String) } });
  });

  it('a content encoding or charset the parser does not read: 415 in the envelope', async () => {
    app = await startExpressApp({ before: [express.json()] });
    await expectEnvelope(await post('/api/v2/jobs', '{}', { ...JSON_TYPE, 'content-encoding': 'x-unknown' }), 415, 'unsupported_media_type');
    await expectEnvelope(await post('/api/v2/jobs', '{}', { 'content-type': 'application/json; charset=latin-9' }), 415, 'unsupported_media_type');
  });

  it("outside the mount, and for errors that are not a parser's, the app's own error handling answers", async () => {
    const teapot: RequestHandler = (req, _res, next) =>
      next(req.path.endsWith('/teapot') ? Object.assign(new Error('short and stout'), { status: 418 }) : undefined);
    app = await startExpressApp({ before: [express.json(), teapot] });
    const own = await fetch(`${app.origin}/echo`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ a: 'x'.repeat(PAST_LIMIT) }) });
    expect(own.status).toBe(413);
    expect(own.headers.get('content-type')).toMatch(/^text\/html/);
    const other = await fetch(`${app.base}/api/v2/teapot`);
    expect(other.status).toBe(418);
    expect(other.headers.get('content-type')).toMatch(/^text\/html/);
    // A body the parser accepted still reaches graphrun, re-serialised.
    const ok = await post('/api/v2/jobs', JSON.stringify({ workflow: saveImageWorkflow() }));
    expect(ok.status).toBe(201);
  });
});

describe("express: the parser only on the app's own route, as examples/express.ts has it", () => {
  let app: ExpressApp;
  afterEach(() => app?.close());

  it("a workflow past the parser's limit is graphrun's to take; the app's route still parses and limits its JSON", async () => {
    app = await startExpressApp({
      configure: (a) => a.post('/notes', express.json(), (req, res) => void res.status(201).json({ saved: req.body })),
    });
    const body = JSON.stringify({ workflow: largeWorkflow() });
    expect(body.length).toBeGreaterThan(PAST_LIMIT);
    const res = await fetch(`${app.base}/api/v2/jobs`, { method: 'POST', headers: JSON_TYPE, body });
    const job = await jsonOf(res);
    expect({ status: res.status, body: job }).toMatchObject({ status: 201, body: { id: expect.any(String), status: expect.any(String) } });

    const note = await fetch(`${app.origin}/notes`, { method: 'POST', headers: JSON_TYPE, body: '{"a":1}' });
    expect(note.status).toBe(201);
    expect(await note.json()).toEqual({ saved: { a: 1 } });
    const tooLarge = await fetch(`${app.origin}/notes`, { method: 'POST', headers: JSON_TYPE, body });
    expect(tooLarge.status).toBe(413);
  });
});
