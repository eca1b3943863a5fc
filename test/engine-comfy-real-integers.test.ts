// Integers beyond 2^53 against the real engine server (ComfyUI, CPU, started
// by the test): a seed reaches the server digit for digit, the server's
// 2^64 - 1 maxima are what graphrun validates against and shows in
// /api/object_info, and a value over them is refused before it is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { waitForJob } from './helpers/jobs.ts';
import { type RealComfyUI, startRealComfyUI } from './helpers/real-comfyui.ts';

const U64_MAX = '18446744073709551615';
const ABOVE_2_53 = '9007199254740993';

let server: RealComfyUI;
let h: Harness;
beforeAll(async () => {
  server = await startRealComfyUI();
  h = await startHarness('node-server', { engine: createComfyEngine({ workers: [server.url], healthIntervalMs: 200 }) });
}, 20 * 60_000);
afterAll(async () => {
  await h?.close();
  await server?.stop();
});

/** Submits a workflow given as JSON text (a JavaScript object cannot hold these digits). */
async function submitText(workflow: string): Promise<{ status: number; text: string }> {
  const res = await h.fetch('/api/v2/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"workflow":${workflow}}` });
  return { status: res.status, text: await res.text() };
}

/** Runs the workflow to its end and answers its text outputs by node id. */
async function textsOf(workflow: string): Promise<Record<string, string>> {
  const { status, text } = await submitText(workflow);
  expect(status, text).toBe(201);
  const job = await waitForJob(h, JSON.parse(text).id, ['succeeded', 'failed'], 120_000);
  expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
  const texts: Record<string, string> = {};
  for (const output of job.outputs) if (output.type === 'text') texts[output.node_id] = await (await h.fetch(output.url)).text();
  return texts;
}

describe('integers beyond 2^53 on the real engine server', () => {
  it('a value above 2^53 reaches the server exactly: PrimitiveInt passes it on and PreviewAny shows it', async () => {
    const texts = await textsOf(
      `{"i":{"class_type":"PrimitiveInt","inputs":{"value":${ABOVE_2_53}}},"show":{"class_type":"PreviewAny","inputs":{"source":["i",0]}},` +
        `"const":{"class_type":"PreviewAny","inputs":{"source":${U64_MAX}}}}`,
    );
    expect(texts).toEqual({ show: ABOVE_2_53, const: U64_MAX });
  });

  it('a seed of 2^64 - 1, the maximum the server advertises, passes both validations and runs', async () => {
    const texts = await textsOf(
      `{"noise":{"class_type":"RandomNoise","inputs":{"noise_seed":${U64_MAX}}},"show":{"class_type":"PreviewAny","inputs":{"source":["noise",0]}}}`,
    );
    // The server shows the noise object it made from that seed.
    expect(texts.show).toMatch(/Noise/);
  });

  it('a seed of 2^64 is refused by graphrun against the server maximum, naming the exact values', async () => {
    const { status, text } = await submitText(
      `{"noise":{"class_type":"RandomNoise","inputs":{"noise_seed":18446744073709551616}},"show":{"class_type":"PreviewAny","inputs":{"source":["noise",0]}}}`,
    );
    expect(status).toBe(422);
    expect(JSON.parse(text).error.code).toBe('invalid_workflow');
    expect(text).toContain(`Value 18446744073709551616 bigger than max of ${U64_MAX}`);
  });

  it('/api/object_info shows the server maximum digit for digit', async () => {
    const res = await h.fetch('/api/object_info/RandomNoise');
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(new RegExp(`"noise_seed":\\["INT",\\{[^}]*"max":${U64_MAX}[,}]`));
  });
});
