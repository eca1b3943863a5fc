// The local engine's memory budget (maxJobMemoryBytes): declared sizes that
// cannot fit are refused at validation, naming the node and the input (as
// an out-of-range value is); sizes known only at run time fail the job with
// OOMError before the node runs; LoadImage and LoadImageFromURL refuse an
// image whose decoding would not fit in what is left, before inflating it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalNode } from '../../engine/local/define-node.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import { ExecutionError, type ValidationResult, type Workflow } from '../../engine/types.ts';
import { encodePng } from '../../lib/png/index.ts';
import { blankPng, HUGE_16BIT } from '../helpers/blank-png.ts';
import { createFakeExecutionContext, type FakeInputAsset } from '../helpers/fake-execution-context.ts';

const GiB = 1024 ** 3;
const job = (workflow: Workflow) => ({ id: 'job-1', account_id: 'acct', workflow });

/** The built-in nodes, with run() of the named classes counted (to show a refused node never ran). */
function countedNodes(names: string[]) {
  const runs: Record<string, number> = {};
  const nodes = builtinNodes.map((n): LocalNode => {
    const name = n.definition.name;
    if (!names.includes(name)) return n;
    return { ...n, run: (inputs, ctx) => ((runs[name] = (runs[name] ?? 0) + 1), n.run(inputs, ctx)) };
  });
  return { nodes, runs };
}

const empty = (width: number, height: number, batch_size = 1, color = 0) => ({
  class_type: 'EmptyImage',
  inputs: { width, height, batch_size, color },
});
const scale = (image: [string, number], width: number, height: number, crop = 'disabled') => ({
  class_type: 'ImageScale',
  inputs: { image, upscale_method: 'nearest-exact', width, height, crop },
});
const save = (images: [string, number]) => ({ class_type: 'SaveImage', inputs: { images, filename_prefix: 'mem' } });

function refusedAt(result: ValidationResult, id: string, input: string) {
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('unreachable');
  expect(result.error.type).toBe('prompt_outputs_failed_validation');
  expect(Object.keys(result.node_errors)).toEqual([id]);
  const issue = result.node_errors[id].errors[0];
  expect(issue).toMatchObject({ type: 'memory_budget_exceeded', details: input, extra_info: { input_name: input } });
  return { issue, result };
}

describe('local engine memory budget: validation', () => {
  it('refuses EmptyImage 16384x16384x4096 under the default 1 GiB, naming the node and batch_size', async () => {
    const engine = createLocalEngine();
    const result = await engine.validate({ '1': empty(16384, 16384, 4096), '2': save(['1', 0]) });
    const { issue } = refusedAt(result, '1', 'batch_size');
    const bytes = 16384 * 16384 * 4096 * 12;
    expect(issue.message).toBe(`Needs 12 TiB (${bytes} bytes) of memory; the job's memory budget is 1 GiB (${GiB} bytes)`);
    expect(issue.extra_info).toMatchObject({ bytes_needed: bytes, budget_bytes: GiB, bytes_held: 0 });
    expect(!result.ok && result.node_errors['1']).toMatchObject({ class_type: 'EmptyImage', dependent_outputs: ['2'] });
    expect(!result.ok && result.error.details).toMatch(/^Node 1 \(EmptyImage\), input 'batch_size': Needs 12 TiB/);
    // One image of the largest size is 3 GiB: the longer side is named.
    refusedAt(await engine.validate({ '1': empty(8192, 16384), '2': save(['1', 0]) }), '1', 'height');
    expect(await engine.validate({ '1': empty(4096, 4096), '2': save(['1', 0]) })).toMatchObject({ ok: true });
  });

  it('refuses ImageScale to 16384x16384 from a known size, and from a size known only at run time (it cannot be less)', async () => {
    const engine = createLocalEngine();
    const fromEmpty = { '1': empty(512, 512), '2': scale(['1', 0], 16384, 16384), '3': save(['2', 0]) };
    const { issue } = refusedAt(await engine.validate(fromEmpty), '2', 'width');
    expect(issue.message).toMatch(
      /^Needs 3\.\d GiB \(\d+ bytes\) of memory; the job's memory budget is 1 GiB \(1073741824 bytes\), of which earlier results hold 3 MiB \(3145728 bytes\)$/,
    );
    const fromFile = { '1': { class_type: 'LoadImage', inputs: { image: 'any.png' } }, '2': scale(['1', 0], 16384, 16384), '3': save(['2', 0]) };
    refusedAt(await engine.validate(fromFile), '2', 'width');
    // A side of 0 follows the image's aspect: 512x512 to a height of 16384 is 16384 wide too.
    refusedAt(await engine.validate({ ...fromEmpty, '2': scale(['1', 0], 0, 16384) }), '2', 'height');
    expect(await engine.validate({ ...fromEmpty, '2': scale(['1', 0], 2048, 2048) })).toMatchObject({ ok: true });
  });

  it('follows primitive values into sizes, adds up results as the run holds them, and counts twins once', async () => {
    const engine = createLocalEngine({ maxJobMemoryBytes: 5 * 1024 * 1024 });
    const viaPrimitive = {
      w: { class_type: 'PrimitiveInt', inputs: { value: 1024 } },
      '1': { class_type: 'EmptyImage', inputs: { width: ['w', 0], height: 1024, batch_size: 1, color: 0 } },
      '2': save(['1', 0]),
    };
    refusedAt(await engine.validate(viaPrimitive), '1', 'width');
    // 512x512 is 3 MiB: one fits, two different ones do not; two identical ones are one result.
    const two = (color: number) => ({ '1': empty(512, 512), '2': empty(512, 512, 1, color), '3': save(['1', 0]), '4': save(['2', 0]) });
    const { issue } = refusedAt(await engine.validate(two(0xffffff)), '2', 'width');
    expect(issue.extra_info).toMatchObject({ bytes_held: 3 * 1024 * 1024 });
    expect(await engine.validate(two(0))).toMatchObject({ ok: true });
  });

  it('execute() validates again and refuses before running anything', async () => {
    const { nodes, runs } = countedNodes(['EmptyImage', 'SaveImage']);
    const engine = createLocalEngine({ nodes });
    const fake = createFakeExecutionContext();
    const err = await engine.execute(job({ '1': empty(16384, 16384, 4096), '2': save(['1', 0]) }), fake.ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err).toMatchObject({ exception_type: 'ValidationError' });
    expect(err.message).toMatch(/Node 1 \(EmptyImage\), input 'batch_size': Needs 12 TiB/);
    expect(runs).toEqual({});
    expect(fake.types()).toEqual([]);
  });
});

describe('local engine memory budget: run time', () => {
  const small = encodePng({ width: 8, height: 4, channels: 3, data: new Uint8Array(96).fill(200) });
  const assets: FakeInputAsset[] = [{ id: 'a1', name: 'small.png', content_type: 'image/png', bytes: small }];

  it('fails with OOMError, naming node, class and bytes, when a size known only at run time does not fit; the node never runs', async () => {
    const { nodes, runs } = countedNodes(['ImageScale']);
    const engine = createLocalEngine({ nodes, maxJobMemoryBytes: 2 * 1024 * 1024 });
    // The loaded image is 8x4: a height of 4096 makes it 8192 wide, 384 MiB; ahead of the run only 1x4096 was certain.
    const workflow = { l: { class_type: 'LoadImage', inputs: { image: 'small.png' } }, s: scale(['l', 0], 0, 4096), o: save(['s', 0]) };
    expect(await engine.validate(workflow)).toMatchObject({ ok: true });
    const fake = createFakeExecutionContext({ assets });
    const err = await engine.execute(job(workflow), fake.ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err).toMatchObject({ exception_type: 'OOMError', node_id: 's', class_type: 'ImageScale' });
    const output = 8192 * 4096 * 12;
    const rows = 4 * 8192 * 3 * 8;
    // Held: the 8x4 IMAGE and the 64x64 MASK LoadImage gives an image without alpha.
    expect(err.message).toBe(
      `Node s (ImageScale), input 'height': Needs 384.8 MiB (${output + rows} bytes) of memory; ` +
        `the job's memory budget is 2 MiB (2097152 bytes), of which earlier results hold 16.4 KiB (16768 bytes)`,
    );
    expect(runs).toEqual({});
    expect(fake.of('executing').map((e) => e.node_id)).toEqual(['l', 's']);
  });

  it('a job within the budget runs as before', async () => {
    const engine = createLocalEngine({ maxJobMemoryBytes: 1024 * 1024 });
    const fake = createFakeExecutionContext({ assets });
    const workflow = {
      '1': empty(64, 64, 2, 0x336699),
      '2': scale(['1', 0], 128, 96, 'center'),
      l: { class_type: 'LoadImage', inputs: { image: 'small.png' } },
      b: { class_type: 'ImageBlend', inputs: { image1: ['2', 0], image2: ['l', 0], blend_factor: 0.5, blend_mode: 'normal' } },
      '3': save(['b', 0]),
    };
    await engine.execute(job(workflow), fake.ctx);
    expect(fake.outputs.map((o) => o.name)).toEqual(['mem_00001_.png', 'mem_00002_.png']);
  });

  it("LoadImage refuses the issue's 16-bit 16384x4096 PNG with OOMError before decoding it", async () => {
    const engine = createLocalEngine();
    const png = await blankPng(HUGE_16BIT);
    const fake = createFakeExecutionContext({ assets: [{ id: 'a2', name: 'huge.png', content_type: 'image/png', bytes: png }] });
    const workflow = { load: { class_type: 'LoadImage', inputs: { image: 'huge.png' } }, out: save(['load', 0]) };
    const err = await engine.execute(job(workflow), fake.ctx).catch((e) => e);
    expect(err).toMatchObject({ exception_type: 'OOMError', node_id: 'load', class_type: 'LoadImage' });
    const decode = 4096 * (1 + 16384 * 8) + 16384 * 4096 * 16;
    expect(err.message).toBe(
      `Node load (LoadImage): the image is 16384x4096 and decoding it needs 1.5 GiB (${decode} bytes); ` +
        `1 GiB (${GiB} bytes) of the job's memory budget is left`,
    );
  });

  describe('LoadImageFromURL', () => {
    let server: Server;
    let base: string;
    beforeAll(async () => {
      const png = await blankPng(HUGE_16BIT);
      server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('refuses it with OOMError too, not as a download failure', async () => {
      const engine = createLocalEngine({ settings: { allowPrivateUrls: true } });
      const workflow = { u: { class_type: 'LoadImageFromURL', inputs: { url: `${base}/huge.png` } }, out: save(['u', 0]) };
      const err = await engine.execute(job(workflow), createFakeExecutionContext().ctx).catch((e) => e);
      expect(err).toMatchObject({ exception_type: 'OOMError', node_id: 'u', class_type: 'LoadImageFromURL' });
      expect(err.message).toMatch(/^Node u \(LoadImageFromURL\): the image is 16384x4096 and decoding it needs 1\.5 GiB/);
    });
  });
});
