// Errors answered outside a surface's own handlers (routing, path decoding,
// an adapter's refusals) still come in that surface's shape: a client of
// /proxy/musicgen reads `{detail}`, of /proxy/videogen `{message, details}`,
// of the cloud-compatible /api `{code, message}`, of v2 the envelope. Paths
// no route takes outside /api/v2 and /proxy are the reference engine's, and
// answered as its server answers them (`404: Not Found` as text).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../adapters/node/server.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

const shapes = {
  music: (body: any, code: string) => expect(body).toEqual({ detail: { code, message: expect.any(String) } }),
  video: (body: any) => expect(body).toEqual({ message: expect.any(String), details: expect.any(Array) }),
  cloud: (body: any, code: string) => expect(body).toMatchObject({ code, message: expect.any(String) }),
  v2: (body: any, code: string) => expect(body).toEqual({ error: { code, message: expect.any(String) } }),
};

describe.each(MODES)('error shapes by surface (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(() => h.close());

  it('a wrong method on the music endpoint: 405 with Allow, in the music shape', async () => {
    const res = await h.fetch('/proxy/musicgen/t2m/generate', { method: 'PUT', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    shapes.music(await res.json(), 'method_not_allowed');
  });

  it('an unknown path under the music prefix: 404 in the music shape', async () => {
    const res = await h.fetch('/proxy/musicgen/nothing-here');
    expect(res.status).toBe(404);
    shapes.music(await res.json(), 'not_found');
  });

  it('a wrong method and a bad task id encoding on the video endpoints: the video shape', async () => {
    const wrong = await h.fetch('/proxy/videogen/multiframe');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    shapes.video(await wrong.json());
    const badEncoding = await h.fetch('/proxy/videogen/tasks/%E0%A4');
    expect(badEncoding.status).toBe(400);
    shapes.video(await badEncoding.json());
  });

  it('the cloud surface, under /api and bare: unknown paths and wrong methods as the reference answers them, bad encodings in its shape', async () => {
    // aiohttp's answers: the status line as a plain-text body.
    // `/` is the operator surface's (the dashboard).
    for (const path of ['/api/no-such-route', '/api', '/nowhere', '/proxy/other/thing']) {
      const unknown = await h.fetch(path);
      expect({ path, status: unknown.status, type: unknown.headers.get('content-type'), body: await unknown.text() }).toEqual({
        path,
        status: 404,
        type: 'text/plain; charset=utf-8',
        body: '404: Not Found',
      });
    }
    for (const path of ['/prompt', '/api/prompt']) {
      const wrong = await h.fetch(path, { method: 'DELETE' });
      expect({ path, status: wrong.status, allow: wrong.headers.get('allow'), body: await wrong.text() }).toEqual({
        path,
        status: 405,
        allow: 'POST, GET',
        body: '405: Method Not Allowed',
      });
    }
    const badEncoding = await h.fetch('/job/%E0%A4/status');
    expect(badEncoding.status).toBe(400);
    shapes.cloud(await badEncoding.json(), 'malformed_request');
  });

  it('v2 keeps the envelope under /api/v2; HEAD answers carry no body', async () => {
    const wrong = await h.fetch('/api/v2/jobs', { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    shapes.v2(await wrong.json(), 'method_not_allowed');
    const unknown = await h.fetch('/api/v2/nowhere');
    expect(unknown.status).toBe(404);
    shapes.v2(await unknown.json(), 'not_found');
    for (const path of ['/proxy/musicgen/nothing-here', '/nowhere']) {
      const head = await h.fetch(path, { method: 'HEAD' });
      expect(head.status).toBe(404);
      expect(await head.text()).toBe('');
    }
  });
});

describe("the Node adapter's own refusals", () => {
  let h: Harness;
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    h = await startHarness('in-process');
    const server = await serve(h.service, { host: '127.0.0.1', port: 0, maxBodyBytes: 1024 });
    url = server.url;
    close = () => server.close();
  });
  afterAll(async () => {
    await close();
    await h.close();
  });

  const post = (path: string) =>
    fetch(url + path, { method: 'POST', body: new Uint8Array(4096), headers: { 'content-type': 'application/octet-stream' } });

  it('a body over the limit is refused in the shape of the surface it was sent to', async () => {
    const music = await post('/proxy/musicgen/t2m/generate');
    expect(music.status).toBe(400);
    shapes.music(await music.json(), 'bad_request');
    const video = await post('/proxy/videogen/multiframe');
    expect(video.status).toBe(400);
    shapes.video(await video.json());
    for (const path of ['/api/prompt', '/prompt', '/upload/image']) {
      const cloud = await post(path);
      expect(cloud.status).toBe(413);
      shapes.cloud(await cloud.json(), 'payload_too_large');
    }
    const v2 = await post('/api/v2/jobs');
    expect(v2.status).toBe(413);
    shapes.v2(await v2.json(), 'payload_too_large');
  });
});
