// The job memory budget (maxJobMemoryBytes, default 1 GiB) as clients see
// it: a workflow whose declared sizes cannot fit is refused at submission on
// both surfaces, naming the node and the input (v2 422 invalid_workflow,
// /api/prompt 400 with node_errors); the 16-bit 16384x4096 PNG
// (about 500 KB) fails a LoadImage job with OOMError and is refused by
// /api/upload/mask with a 400, both before it is decoded; jobs within the
// budget run as before, and the option reaches the built-in engine.
import { afterEach, describe, expect, it } from 'vitest';
import { blankPng, HUGE_16BIT } from './helpers/blank-png.ts';
import { type FilesHarness, makePng, postForm, startFiles, uploadForm, uploadImageOk } from './helpers/cloud-files.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { asKey, saveImageWorkflow, submit, submitOk, waitForJob } from './helpers/jobs.ts';

const GiB = 1024 ** 3;
const save = (images: [string, number]) => ({ class_type: 'SaveImage', inputs: { images, filename_prefix: 'mem' } });
const HUGE_EMPTY = { '1': { class_type: 'EmptyImage', inputs: { width: 16384, height: 16384, batch_size: 4096, color: 0 } }, '2': save(['1', 0]) };

async function prompt(h: Harness, workflow: Record<string, unknown>, key: string) {
  const res = await h.fetch('/api/prompt', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ prompt: workflow }),
  });
  return { res, body: (await res.json()) as any };
}

describe.each(MODES)('job memory budget (%s)', (mode) => {
  let f: FilesHarness | undefined;
  let plain: Harness | undefined;
  afterEach(async () => {
    await f?.h.close();
    await plain?.close();
    f = plain = undefined;
  });

  it('EmptyImage 16384x16384x4096 is refused at submission on both surfaces, naming the node and the input', async () => {
    f = await startFiles(mode);
    const v2 = await submit(asKey(f.h, 'key-alice'), { workflow: HUGE_EMPTY });
    expect(v2.res.status).toBe(422);
    expect(v2.body.error).toMatchObject({
      code: 'invalid_workflow',
      details: { reason: 'prompt_outputs_failed_validation', node_errors: { '1': [{ field: 'batch_size', reason: 'memory_budget_exceeded' }] } },
    });
    expect(v2.body.error.message).toBe(
      `Node 1 (EmptyImage): Needs 12 TiB (${16384 * 16384 * 4096 * 12} bytes) of memory; ` +
        `the job's memory budget is 1 GiB (${GiB} bytes): batch_size`,
    );

    const cloud = await prompt(f.h, HUGE_EMPTY, 'key-alice');
    expect(cloud.res.status).toBe(400);
    expect(cloud.body).toMatchObject({ code: 'invalid_workflow', error: { type: 'prompt_outputs_failed_validation' } });
    expect(cloud.body.node_errors['1']).toMatchObject({
      class_type: 'EmptyImage',
      dependent_outputs: ['2'],
      errors: [{ type: 'memory_budget_exceeded', details: 'batch_size', extra_info: { input_name: 'batch_size', budget_bytes: GiB } }],
    });
  });

  it('ImageScale to 16384x16384 is refused at submission, naming the node and width', async () => {
    f = await startFiles(mode);
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 512, height: 512, batch_size: 1, color: 0 } },
      '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: 'bicubic', width: 16384, height: 16384, crop: 'disabled' } },
      '3': save(['2', 0]),
    };
    const v2 = await submit(asKey(f.h, 'key-alice'), { workflow });
    expect(v2.res.status).toBe(422);
    expect(v2.body.error.details.node_errors).toEqual({ '2': [{ field: 'width', reason: 'memory_budget_exceeded', message: expect.any(String) }] });
    const cloud = await prompt(f.h, workflow, 'key-alice');
    expect(cloud.res.status).toBe(400);
    expect(cloud.body.node_errors['2'].errors[0]).toMatchObject({ type: 'memory_budget_exceeded', extra_info: { input_name: 'width' } });
  });

  it("the issue's 16-bit 16384x4096 PNG fails a LoadImage job with OOMError, and /api/upload/mask refuses it with a 400", async () => {
    f = await startFiles(mode);
    const png = await blankPng(HUGE_16BIT);
    // Within the upload limits of the contract (16384 px per edge, 64 megapixels), so it is stored.
    const { name } = await uploadImageOk(f.alice, { bytes: png, filename: 'huge.png' });

    const v2 = asKey(f.h, 'key-alice');
    const job = await submitOk(v2, { load: { class_type: 'LoadImage', inputs: { image: name } }, out: save(['load', 0]) });
    const failed = await waitForJob(v2, job.id, 'failed', 15_000);
    expect(failed.error).toMatchObject({ code: 'node_execution_error', exception_type: 'OOMError', node_id: 'load', class_type: 'LoadImage' });
    expect(failed.error.message).toMatch(/^Node load \(LoadImage\): the image is 16384x4096 and decoding it needs 1\.5 GiB/);

    const mask = makePng(4, 4, 4, () => [0, 0, 0, 128]);
    const ref = JSON.stringify({ filename: name, subfolder: '', type: 'input' });
    const r = await postForm(f.alice, '/api/upload/mask', uploadForm({ bytes: mask, filename: 'mask.png' }, { original_ref: ref }));
    // 512 MiB of 16-bit scanlines and 256 MiB of 8-bit RGBA, beside the 64 MiB alpha and the encoder's 256 MiB of rows.
    const needed = 4096 * (1 + 16384 * 8) + 16384 * 4096 * 4 + 16384 * 4096 + (16384 * 4096 * 4 + 4096);
    expect({ status: r.res.status, body: r.body }).toEqual({
      status: 400,
      body: {
        code: 'invalid_request',
        message: `original_ref: the original is 16384x4096 and masking it needs ${needed} bytes of memory; this service allows ${GiB}`,
        details: { field: 'original_ref', reason: 'too large', width: 16384, height: 4096, bytes_needed: needed, max_bytes: GiB },
      },
    });
  }, 30_000);

  it('a job within the budget runs, and a small mask is applied, as before', async () => {
    f = await startFiles(mode);
    const v2 = asKey(f.h, 'key-alice');
    const job = await submitOk(v2, saveImageWorkflow());
    expect((await waitForJob(v2, job.id, 'succeeded')).outputs).toHaveLength(1);
    const { name } = await uploadImageOk(f.alice, { bytes: makePng(8, 8, 3, () => [10, 20, 30]) });
    const ref = JSON.stringify({ filename: name, subfolder: '', type: 'input' });
    const r = await postForm(f.alice, '/api/upload/mask', uploadForm({ bytes: makePng(8, 8, 4, () => [0, 0, 0, 9]) }, { original_ref: ref }));
    expect(r.res.status).toBe(200);
  });

  it('maxJobMemoryBytes reaches the built-in engine and /upload/mask', async () => {
    plain = await startHarness(mode, { maxJobMemoryBytes: 1024 * 1024 });
    // 512x512 is 3 MiB: beyond 1 MiB.
    const workflow = { '1': { class_type: 'EmptyImage', inputs: { width: 512, height: 512, batch_size: 1, color: 0 } }, '2': save(['1', 0]) };
    const refused = await submit(plain, { workflow });
    expect(refused.res.status).toBe(422);
    expect(refused.body.error.details.node_errors['1'][0]).toMatchObject({ field: 'width', reason: 'memory_budget_exceeded' });
    expect(refused.body.error.message).toMatch(/the job's memory budget is 1 MiB \(1048576 bytes\)/);
    const ok = await submitOk(plain, { ...workflow, '1': { ...workflow['1'], inputs: { ...workflow['1'].inputs, width: 128, height: 128 } } });
    expect((await waitForJob(plain, ok.id, 'succeeded')).outputs).toHaveLength(1);

    await plain.close();
    plain = undefined;
    f = await startFiles(mode, { maxJobMemoryBytes: 100_000 });
    // 128x128: 16 KiB of alpha and 64 KiB of rows beside the decode's 48 KiB of scanlines and 64 KiB of RGBA.
    const { name } = await uploadImageOk(f.alice, { bytes: makePng(128, 128, 3, () => [1, 2, 3]) });
    const ref = JSON.stringify({ filename: name, subfolder: '', type: 'input' });
    const r = await postForm(f.alice, '/api/upload/mask', uploadForm({ bytes: makePng(4, 4, 4, () => [0, 0, 0, 9]) }, { original_ref: ref }));
    expect(r.res.status).toBe(400);
    expect(r.body.details).toMatchObject({ field: 'original_ref', reason: 'too large', max_bytes: 100_000 });
    // A mask too large to decode within the bound is the `image` field's fault.
    const { name: small } = await uploadImageOk(f.alice, { bytes: makePng(8, 8, 3, () => [1, 2, 3]) });
    const big = makePng(128, 128, 4, () => [0, 0, 0, 9]);
    const ref2 = JSON.stringify({ filename: small, subfolder: '', type: 'input' });
    const m = await postForm(f.alice, '/api/upload/mask', uploadForm({ bytes: big }, { original_ref: ref2 }));
    expect(m.res.status).toBe(400);
    expect(m.body.details).toMatchObject({ field: 'image', reason: 'too large', width: 128, height: 128, max_bytes: 100_000 });
  });
});
