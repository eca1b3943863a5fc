// The cloud client flow end to end, through the cloud surface only (X-API-Key
// throughout): upload an image, run a workflow that loads it by the returned
// name (POST /api/prompt), poll the job status, read the outputs from
// /api/history, download each through /api/view's redirect with no auth
// header. Another account can neither view the outputs nor load the input.
import { afterEach, describe, expect, it } from 'vitest';
import { decodePng } from '../lib/png/index.ts';
import { bytesOf } from './helpers/assets.ts';
import { expectCloudError, type FilesHarness, follow, makePng, reply, startFiles, uploadImageOk, view } from './helpers/cloud-files.ts';
import { type Harness, MODES } from './helpers/harness.ts';
import { until } from './helpers/jobs.ts';

async function prompt(h: Harness, workflow: Record<string, unknown>): Promise<string> {
  const r = await reply(
    await h.fetch('/api/prompt', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: workflow }) }),
  );
  expect({ status: r.res.status, body: r.body }).toMatchObject({ status: 200, body: { prompt_id: expect.any(String) } });
  return r.body.prompt_id;
}

async function finished(h: Harness, id: string): Promise<string> {
  let status = '';
  await until(
    `job ${id} finished`,
    async () => {
      status = (await reply(await h.fetch(`/api/job/${id}/status`))).body.status;
      return ['completed', 'failed', 'cancelled'].includes(status);
    },
    10_000,
  );
  return status;
}

describe.each(MODES)('cloud file flow (%s)', (mode) => {
  let f: FilesHarness;
  afterEach(async () => f?.h.close());

  it('upload -> prompt with LoadImage -> status -> history -> view -> same pixels', async () => {
    f = await startFiles(mode);
    const png = makePng(6, 5, 3, (x, y) => [x * 40, y * 50, 90]);
    const { name } = await uploadImageOk(f.alice, { bytes: png, filename: 'photo.png' });
    const id = await prompt(f.alice, {
      '1': { class_type: 'LoadImage', inputs: { image: name } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'flow' } },
    });
    expect(await finished(f.alice, id)).toBe('completed');
    const history = (await reply(await f.alice.fetch(`/api/history/${id}`))).body;
    const images = history[id].outputs['2'].images;
    expect(images).toEqual([{ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'output' }]);
    const ref = images[0];
    const r = await view(f.alice, `filename=${ref.filename}&subfolder=${ref.subfolder}&type=${ref.type}`);
    const out = decodePng(await bytesOf(await follow(f.h, r)));
    expect(out.data).toEqual(decodePng(png).data);
    // Bob: not his output, not his input.
    expectCloudError(await view(f.bob, `filename=${ref.filename}&type=output`), 404, 'not_found');
    const bobs = await prompt(f.bob, {
      '1': { class_type: 'LoadImage', inputs: { image: name } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'flow' } },
    });
    expect(await finished(f.bob, bobs)).toBe('failed');
  });
});
