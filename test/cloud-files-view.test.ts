// GET /api/view (and bare /view): the client flow (upload, view, follow the
// redirect with no auth header, same bytes), job outputs by the names history
// gives, types, traversal attempts, unknown names and another account's.
import { afterEach, describe, expect, it } from 'vitest';
import { bytesOf } from './helpers/assets.ts';
import { expectCloudError, type FilesHarness, follow, makePng, startFiles, uploadImageOk, view } from './helpers/cloud-files.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, saveImageWorkflow, submitOk, waitForJob } from './helpers/jobs.ts';

const PNG = makePng(5, 4, 4, (x, y) => [x * 50, y * 60, 200, 255 - x * 10]);

describe.each(MODES)('cloud /view (%s)', (mode) => {
  let f: FilesHarness;
  afterEach(async () => f?.h.close());

  it('302 to a signed, short-lived URL that serves the same bytes without any auth header', async () => {
    f = await startFiles(mode);
    const { name } = await uploadImageOk(f.alice, { bytes: PNG });
    for (const path of ['/api/view', '/view']) {
      const r = await view(f.alice, `filename=${name}&subfolder=&type=input`, path);
      expect(r.res.status).toBe(302);
      expect(r.res.headers.get('cache-control')).toBe('no-store');
      expect(r.body).toBe('');
      const location = new URL(r.res.headers.get('location')!);
      expect(location.pathname).toMatch(/^\/api\/v2\/assets\/[0-9a-f-]{36}\/content$/);
      // Signed and short-lived: an expiry (epoch seconds) within the signed-URL TTL, and a signature.
      const exp = Number(location.searchParams.get('exp'));
      expect(exp * 1000).toBeGreaterThan(Date.now());
      expect(exp * 1000).toBeLessThanOrEqual(Date.now() + 2 * 3600_000);
      expect(location.searchParams.get('sig')).toMatch(/\S{16,}/);
      const content = await follow(f.h, r);
      expect(content.status).toBe(200);
      expect(await bytesOf(content)).toEqual(PNG);
    }
    // Without the signature the content URL is refused (it is the signature that lets the bare fetch in).
    const location = new URL((await view(f.alice, `filename=${name}`)).res.headers.get('location')!);
    expect((await f.h.fetch(location.origin + location.pathname)).status).toBe(401);
  });

  it('type output | input | temp all find the file (one flat namespace); subfolder and channel are ignored', async () => {
    f = await startFiles(mode);
    const { name } = await uploadImageOk(f.alice, { bytes: PNG }, { type: 'temp' });
    for (const q of ['type=output', 'type=input', 'type=temp', '', 'subfolder=some/folder', 'channel=rgb&preview=webp;50']) {
      const r = await view(f.alice, `filename=${name}&${q}`);
      expect(r.res.status, q).toBe(302);
      expect(await bytesOf(await follow(f.h, r))).toEqual(PNG);
    }
  });

  it('a job output is served by the name history gives (hash) and by its own file name', async () => {
    f = await startFiles(mode);
    const v2 = asKey(f.h, 'key-alice');
    const job = await submitOk(v2, saveImageWorkflow(0x102030, 3, 2, 'shot'));
    const [output] = (await waitForJob(v2, job.id, 'succeeded')).outputs;
    const stored = await bytesOf(await f.h.fetch(output.url));
    const hashName = `${output.hash.slice('blake3:'.length)}.png`;
    for (const name of [hashName, output.name]) {
      const r = await view(f.alice, `filename=${encodeURIComponent(name)}&type=output`);
      expect(await bytesOf(await follow(f.h, r))).toEqual(stored);
    }
    expectCloudError(await view(f.bob, `filename=${hashName}&type=output`), 404, 'not_found');
    expectCloudError(await view(f.bob, `filename=${output.name}&type=output`), 404, 'not_found');
  });

  it("unknown names and another account's are the same 404", async () => {
    f = await startFiles(mode);
    const { name } = await uploadImageOk(f.alice, { bytes: PNG });
    const bobs = await view(f.bob, `filename=${name}`);
    expectCloudError(bobs, 404, 'not_found');
    const unknown = await view(f.bob, `filename=${'0'.repeat(64)}.png`);
    expectCloudError(unknown, 404, 'not_found');
    expect(bobs.body.message.replace(name, 'X')).toBe(unknown.body.message.replace(`${'0'.repeat(64)}.png`, 'X'));
    expectCloudError(await view(f.alice, 'filename=ComfyUI_00001_.png'), 404, 'not_found');
  });

  it('traversal attempts, a missing filename and an unknown type are 400', async () => {
    f = await startFiles(mode);
    const { name } = await uploadImageOk(f.alice, { bytes: PNG });
    const cases: Array<[string, string]> = [
      ['filename=../secret.png', 'filename'],
      ['filename=a/../../b.png', 'filename'],
      ['filename=%2Fetc%2Fpasswd', 'filename'],
      ['filename=a%5Cb.png', 'filename'],
      [`filename=${name}%00.png`, 'filename'],
      ['filename=', 'filename'],
      ['type=output', 'filename'],
      [`filename=${name}&subfolder=..`, 'subfolder'],
      [`filename=${name}&subfolder=%2Froot`, 'subfolder'],
      [`filename=${name}&subfolder=a%5Cb`, 'subfolder'],
      [`filename=${name}&type=models`, 'type'],
    ];
    for (const [q, field] of cases) {
      const r = await view(f.alice, q);
      expectCloudError(r, 400, 'invalid_request');
      expect(r.body.details.field, q).toBe(field);
    }
  });

  it('needs an API key when accounts are set: 401 {code, message}', async () => {
    f = await startFiles(mode);
    const { name } = await uploadImageOk(f.alice, { bytes: PNG });
    for (const path of ['/api/view', '/view']) {
      const r = await view(f.h, `filename=${name}`, path);
      expectCloudError(r, 401, 'unauthorized');
      expect(r.res.headers.get('location')).toBeNull();
    }
    expectCloudError(await view(f.h, `filename=${name}`, '/api/view'), 401, 'unauthorized');
  });
});
