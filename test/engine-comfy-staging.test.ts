// The worker engine through the whole service: a job's input assets are
// staged on its worker (uploaded once through /upload/image, the prompt
// naming what the worker answered), and the prompt goes to the worker with
// the engine's client id, the job id as prompt id, and the partner-node key
// under the worker's name for it, which is stored nowhere.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectSameBytes, upload } from './helpers/assets.ts';
import { asApiKey, makePng, nameOf, uploadImageOk } from './helpers/cloud-files.ts';
import { postJson } from './helpers/cloud-jobs.ts';
import { assetRef, getJob, getWorkflow, saveImageWorkflow, submit, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService;
beforeEach(async () => {
  s = await startWorkerService();
});
afterEach(async () => {
  await s.close();
});

const uploads = () => s.workers[0].requests.filter((r) => r.method === 'POST' && /^(\/api)?\/upload\/image$/.test(r.path));
const gradient = (seed: number) => makePng(5, 4, 3, (x, y) => [(x * 40 + seed) & 255, (y * 60 + seed) & 255, seed & 255]);

/** LoadImage twice on the same file, each saved: the file must be staged once and read by both. */
const loadTwice = (image: unknown) => ({
  a: { class_type: 'LoadImage', inputs: { image } },
  b: { class_type: 'LoadImage', inputs: { image } },
  sa: { class_type: 'SaveImage', inputs: { images: ['a', 0], filename_prefix: 'a' } },
  sb: { class_type: 'SaveImage', inputs: { images: ['b', 0], filename_prefix: 'b' } },
});

describe('staging input assets on the worker', () => {
  it('a v2 core/ASSET reference: uploaded once, the prompt names what the worker answered, bytes equal', async () => {
    const bytes = gradient(7);
    const up = await upload(s, bytes, { content_type: 'image/png', file_path: 'cat.png' }, {});
    expect(up.res.status).toBe(201);
    const id: string = up.body.id;
    // A different file already has the name the engine asks for: the worker picks another, and the prompt must follow it.
    writeFileSync(join(s.workers[0].files.dir('input'), `${id}.png`), gradient(99));

    const { res, body: job } = await submit(s, { workflow: loadTwice(assetRef(id)) });
    expect(res.status).toBe(201);
    const done = await waitForJob(s, job.id, 'succeeded');

    expect(uploads()).toHaveLength(1);
    const w = s.workers[0];
    const prompt = w.submissions.at(-1)!.body.prompt as Record<string, { inputs: Record<string, unknown> }>;
    expect(prompt.a.inputs.image).toBe(`${id} (1).png`);
    expect(prompt.b.inputs.image).toBe(`${id} (1).png`);
    expectSameBytes(s.workerFile(w, 'input', `${id} (1).png`), bytes);
    expect(readdirSync(w.files.dir('input')).sort()).toEqual([`${id} (1).png`, `${id}.png`]);
    // Both loaders read the staged file: each saved image is the input decoded and encoded again, so they agree.
    expect(done.outputs.map((o: any) => o.node_id).sort()).toEqual(['sa', 'sb']);
    expect(done.outputs[0].hash).toBe(done.outputs[1].hash);
  });

  it('the content-addressed name /api/upload/image answered: uploaded under that name, bytes equal', async () => {
    const bytes = gradient(42);
    const { name } = await uploadImageOk(s, { bytes, filename: 'photo.png' });
    expect(name).toBe(await nameOf(bytes));
    const r = await postJson(s, '/api/prompt', { prompt: loadTwice(name) });
    expect(r.res.status).toBe(200);
    const id = r.body.prompt_id;
    await waitForJob(s, id, 'succeeded');

    expect(uploads()).toHaveLength(1);
    const w = s.workers[0];
    const prompt = w.submissions.at(-1)!.body.prompt as Record<string, { inputs: Record<string, unknown> }>;
    expect(prompt.a.inputs.image).toBe(name);
    expect(prompt.b.inputs.image).toBe(name);
    expectSameBytes(s.workerFile(w, 'input', name), bytes);
  });

  it('an input the account has no asset for is left for the worker to resolve (a file it has)', async () => {
    const bytes = gradient(3);
    writeFileSync(join(s.workers[0].files.dir('input'), 'example.png'), bytes);
    const { res, body: job } = await submit(s, {
      workflow: {
        l: { class_type: 'LoadImage', inputs: { image: 'example.png' } },
        p: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'x' } },
      },
    });
    expect({ status: res.status, body: job }).toMatchObject({ status: 201 });
    await waitForJob(s, job.id, 'succeeded');
    expect(uploads()).toHaveLength(0);
    expect((s.workers[0].submissions.at(-1)!.body.prompt as any).l.inputs.image).toBe('example.png');
  });
});

describe('an upload the worker fails', () => {
  const loadOnce = (image: unknown) => ({
    l: { class_type: 'LoadImage', inputs: { image } },
    p: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'staged' } },
  });

  it('a 500: the job runs again (another try of the upload) and succeeds with the staged bytes', async () => {
    const bytes = gradient(11);
    const up = await upload(s, bytes, { content_type: 'image/png', file_path: 'retry.png' }, {});
    s.workers[0].failures.routes.push({ route: 'POST /upload/image', status: 500, times: 1 });
    const { res, body: job } = await submit(s, { workflow: loadOnce(assetRef(up.body.id)) });
    expect(res.status).toBe(201);
    const done = await waitForJob(s, job.id, 'succeeded', 5000);
    expect(uploads()).toHaveLength(2);
    expect(s.workers[0].submissions.map((x) => x.prompt_id)).toEqual([job.id]);
    expectSameBytes(s.workerFile(s.workers[0], 'input', `${up.body.id}.png`), bytes);
    expect(done.outputs).toHaveLength(1);
  });

  it('a 500, then a 400: the job fails with a ValidationError naming the input and the asset', async () => {
    const up = await upload(s, gradient(12), { content_type: 'image/png', file_path: 'refused.png' }, {});
    const id: string = up.body.id;
    s.workers[0].failures.routes.push({ route: 'POST /upload/image', status: 500, times: 1 }, { route: 'POST /upload/image', status: 400, times: 1 });
    const { body: job } = await submit(s, { workflow: loadOnce(assetRef(id)) });
    const failed = await waitForJob(s, job.id, 'failed', 5000);
    expect(uploads()).toHaveLength(2);
    expect(failed.error).toMatchObject({ exception_type: 'ValidationError', node_id: 'l', class_type: 'LoadImage' });
    expect(
      failed.error.message.startsWith(
        `The worker refused input 'image' of node l (LoadImage): uploading asset ${id} as ${id}.png failed: upload: the worker answered 400`,
      ),
    ).toBe(true);
    // Never submitted: nothing ran.
    expect(s.workers[0].submissions).toEqual([]);
  });
});

describe('submission to the worker', () => {
  const SECRET = `pk-${crypto.randomUUID()}`;

  it("client id is the engine's, prompt id is the job id, the partner key reaches the worker and is stored nowhere", async () => {
    const { res, body: job } = await submit(s, { workflow: saveImageWorkflow(), extra_data: { api_key_platform_org: SECRET } });
    expect(res.status).toBe(201);
    await waitForJob(s, job.id, 'succeeded');

    const w = s.workers[0];
    expect(w.submissions).toHaveLength(1);
    const sent = w.submissions[0].body;
    expect(sent.prompt_id).toBe(job.id);
    expect(sent.client_id).toBe(s.clientIdOn(w));
    expect(sent.extra_data).toEqual({ api_key_comfy_org: SECRET });
    expect(sent.prompt).toEqual(saveImageWorkflow());

    // Not in what the service shows, nor in anything it wrote to disk.
    const wf = await getWorkflow(s, job.id);
    expect(wf.res.status).toBe(200);
    expect(wf.body).toEqual({ workflow: saveImageWorkflow(), format: 'api' });
    expect(JSON.stringify((await getJob(s, job.id)).body)).not.toContain(SECRET);
    await s.service.idle();
    for (const f of readdirSync(s.dir, { recursive: true }).map(String)) {
      const path = join(s.dir, f);
      try {
        expect(readFileSync(path).includes(SECRET), `${f} holds the key`).toBe(false);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
      }
    }
    // Nor does the worker echo it.
    const history = await (await fetch(`${w.url}/history/${job.id}`)).text();
    expect(history).toContain(job.id);
    expect(history).not.toContain(SECRET);
  });

  it('the cloud surface: extra_data.api_key_platform_org of POST /api/prompt reaches the worker the same way', async () => {
    const r = await postJson(asApiKey(s, 'any'), '/api/prompt', {
      prompt: saveImageWorkflow(0x102030),
      extra_data: { api_key_platform_org: SECRET },
    });
    expect(r.res.status).toBe(200);
    await waitForJob(s, r.body.prompt_id, 'succeeded');
    const sent = s.workers[0].submissions.at(-1)!.body;
    expect(sent.prompt_id).toBe(r.body.prompt_id);
    expect(sent.extra_data).toEqual({ api_key_comfy_org: SECRET });
    expect(JSON.stringify((await getWorkflow(s, r.body.prompt_id)).body)).not.toContain(SECRET);
  });

  it("a job whose client sent no extra_data is sent without one, as the worker's own clients do", async () => {
    const { body: job } = await submit(s, { workflow: saveImageWorkflow(0x405060) });
    await waitForJob(s, job.id, 'succeeded');
    expect(s.workers[0].submissions.at(-1)!.body).not.toHaveProperty('extra_data');
  });
});
