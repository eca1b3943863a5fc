// The v2 flow a user runs against a `graphrun` process over HTTP, for the
// CLI's scale-out tests: upload a PNG, submit an invert job over it, poll the
// job (with a bound) until it ends, and read its output's pixels back.
import { expect } from 'vitest';
import { decodePngRgba8 } from '../../lib/png/decode.ts';
import { makePng } from './cloud-files.ts';
import { assetRef } from './jobs.ts';

const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

/** Two pixels, and what ImageInvert makes of them (RGBA). */
export const INPUT_PNG = makePng(2, 1, 3, (x) => (x === 0 ? [10, 20, 30] : [200, 100, 0]));
export const INVERTED_RGBA = [245, 235, 225, 255, 55, 155, 255, 255];

export async function uploadPng(base: string, png = INPUT_PNG): Promise<{ id: string; url: string }> {
  const form = new FormData();
  form.set('file', new Blob([png], { type: 'image/png' }), 'in.png');
  form.set('content_type', 'image/png');
  form.set('file_path', 'in.png');
  const res = await fetch(`${base}/api/v2/assets`, { method: 'POST', body: form });
  const body = (await res.json()) as { id: string; url: string };
  expect({ status: res.status, body }).toMatchObject({ status: 201, body: { id: expect.any(String) } });
  return body;
}

/** Submits LoadImage(asset) -> ImageInvert -> SaveImage; the job's id. */
export async function submitInvert(base: string, assetId: string): Promise<string> {
  const workflow = {
    l: { class_type: 'LoadImage', inputs: { image: assetRef(assetId) } },
    i: { class_type: 'ImageInvert', inputs: { image: ['l', 0] } },
    s: { class_type: 'SaveImage', inputs: { images: ['i', 0], filename_prefix: 'inv' } },
  };
  const res = await fetch(`${base}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow }),
  });
  const body = (await res.json()) as { id: string };
  expect({ status: res.status, body }).toMatchObject({ status: 201, body: { id: expect.any(String) } });
  return body.id;
}

export const getJob = async (base: string, id: string): Promise<any> => (await fetch(`${base}/api/v2/jobs/${id}`)).json();

/** Polls the job until it ends; fails after `boundMs` (a bound, not a wait: it returns as soon as the job ends). */
export async function jobWhenDone(base: string, id: string, boundMs = 25_000): Promise<any> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const job = await getJob(base, id);
    if (TERMINAL.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} not done in ${boundMs} ms: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pixels of the job's one output, downloaded from the instance at `base`. */
export async function outputPixels(base: string, job: any): Promise<number[]> {
  expect({ status: job.status, error: job.error, outputs: job.outputs?.length }).toEqual({ status: 'succeeded', error: null, outputs: 1 });
  const res = await fetch(new URL(job.outputs[0].url, base));
  expect(res.status).toBe(200);
  return [...decodePngRgba8(new Uint8Array(await res.arrayBuffer())).data];
}
