// The image nodes' math on tiny known images, and their IO through a fake
// context: SaveImage, PreviewImage, LoadImage, and LoadImageFromURL against a
// local HTTP server (refused unless allowPrivateUrls is set).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalNode } from '../../engine/local/define-node.ts';
import type { MaskBatch } from '../../engine/local/mask.ts';
import { imageNodes } from '../../engine/local/nodes/image.ts';
import { createImageBatch, type ImageBatch } from '../../lib/image/batch.ts';
import { imageBatchToPng } from '../../lib/image/png-batch.ts';
import { forbiddenHostReason } from '../../lib/net/address-rules.ts';
import { decodePng, encodePng } from '../../lib/png/index.ts';
import { fakeContext } from './fake-node-context.ts';

const node = (name: string): LocalNode => imageNodes.find((n) => n.definition.name === name)!;
const run = async (name: string, inputs: Record<string, unknown>, ctx = fakeContext().ctx) => node(name).run(inputs, ctx);
const first = async (name: string, inputs: Record<string, unknown>) => (await run(name, inputs)).outputs[0] as ImageBatch;

/** A gray image (R = G = B) from rows of values. */
function gray(rows: number[][], count = 1): ImageBatch {
  const img = createImageBatch(rows[0].length, rows.length, count);
  const values = rows.flat();
  for (let b = 0; b < count; b++)
    for (const [p, v] of values.entries()) img.data.fill(v, (b * values.length + p) * 3, (b * values.length + p + 1) * 3);
  return img;
}
/** The red channel as rows, to compare with gray() inputs. */
function rows(img: ImageBatch, b = 0): number[][] {
  return Array.from({ length: img.height }, (_, y) =>
    Array.from({ length: img.width }, (_, x) => img.data[((b * img.height + y) * img.width + x) * 3]),
  );
}
const close = (got: number[][], want: number[][]) => {
  for (const [i, v] of got.flat().entries()) expect(v).toBeCloseTo(want.flat()[i], 6);
};

const G4 = [
  [0, 0.1, 0.2, 0.3],
  [0.4, 0.5, 0.6, 0.7],
  [0.8, 0.9, 1, 0.15],
  [0.25, 0.35, 0.45, 0.55],
];

describe('image node definitions', () => {
  it('uses the reference names, inputs and outputs', () => {
    const io = Object.fromEntries(imageNodes.map((n) => [n.definition.name, [n.definition.input_order.required, n.definition.output]]));
    expect(io).toEqual({
      EmptyImage: [['width', 'height', 'batch_size', 'color'], ['IMAGE']],
      ImageInvert: [['image'], ['IMAGE']],
      ImageCrop: [['image', 'width', 'height', 'x', 'y'], ['IMAGE']],
      ImageScale: [['image', 'upscale_method', 'width', 'height', 'crop'], ['IMAGE']],
      ImageBlend: [['image1', 'image2', 'blend_factor', 'blend_mode'], ['IMAGE']],
      SaveImage: [['images', 'filename_prefix'], []],
      PreviewImage: [['images'], []],
      LoadImage: [['image'], ['IMAGE', 'MASK']],
      LoadImageFromURL: [['url'], ['IMAGE', 'MASK']],
    });
    expect(node('ImageScale').definition.input.required.upscale_method[0]).toEqual(['nearest-exact', 'bilinear', 'area', 'bicubic', 'lanczos']);
    expect(node('ImageBlend').definition.input.required.blend_mode[0]).toEqual([
      'normal',
      'multiply',
      'screen',
      'overlay',
      'soft_light',
      'difference',
    ]);
    expect(node('EmptyImage').definition.input.required.color[1]).toMatchObject({ default: 0, min: 0, max: 0xffffff });
    expect(node('LoadImage').definition.input.required.image).toEqual(['STRING', { image_upload: true }]);
    expect(imageNodes.filter((n) => n.definition.output_node).map((n) => n.definition.name)).toEqual(['SaveImage', 'PreviewImage']);
    expect(node('LoadImageFromURL').cacheable).toBe(false);
  });
});

describe('image math', () => {
  it('EmptyImage fills every image of the batch with the colour', async () => {
    const img = await first('EmptyImage', { width: 2, height: 1, batch_size: 3, color: 0xff8000 });
    expect([img.width, img.height, img.count]).toEqual([2, 1, 3]);
    for (let p = 0; p < 6; p++) expect(Array.from(img.data.subarray(p * 3, p * 3 + 3))).toEqual([1, Math.fround(128 / 255), 0]);
  });

  it('ImageInvert computes 1 - x', async () => {
    close(
      rows(
        await first('ImageInvert', {
          image: gray([
            [0, 0.25],
            [0.5, 1],
          ]),
        }),
      ),
      [
        [1, 0.75],
        [0.5, 0],
      ],
    );
  });

  it('ImageCrop takes the rectangle at x, y and clips it to the image', async () => {
    const image = gray(G4, 2);
    const crop = await first('ImageCrop', { image, width: 2, height: 2, x: 1, y: 2 });
    expect([crop.width, crop.height, crop.count]).toEqual([2, 2, 2]);
    close(rows(crop, 1), [
      [0.9, 1],
      [0.35, 0.45],
    ]);
    close(rows(await first('ImageCrop', { image, width: 512, height: 1, x: 2, y: 0 })), [[0.2, 0.3]]);
    // An origin past the edge is pulled back to the last pixel, as in the reference.
    close(rows(await first('ImageCrop', { image, width: 5, height: 5, x: 9, y: 9 })), [[0.55]]);
  });

  it('ImageScale 4x4 -> 2x2: nearest-exact, bilinear, area', async () => {
    const scale = async (upscale_method: string) =>
      rows(await first('ImageScale', { image: gray(G4), upscale_method, width: 2, height: 2, crop: 'disabled' }));
    close(await scale('nearest-exact'), [
      [0.5, 0.7],
      [0.35, 0.55],
    ]);
    const blocks = [
      [(0 + 0.1 + 0.4 + 0.5) / 4, (0.2 + 0.3 + 0.6 + 0.7) / 4],
      [(0.8 + 0.9 + 0.25 + 0.35) / 4, (1 + 0.15 + 0.45 + 0.55) / 4],
    ];
    close(await scale('bilinear'), blocks);
    close(await scale('area'), blocks);
  });

  it('ImageScale methods differ where torch differs (3 -> 2 and 2 -> 4 along a row)', async () => {
    const scale = async (row: number[], upscale_method: string, width: number) =>
      rows(await first('ImageScale', { image: gray([row]), upscale_method, width, height: 1, crop: 'disabled' }))[0];
    const r = [0.2, 0.6, 1];
    close([await scale(r, 'nearest-exact', 2)], [[0.2, 1]]);
    close([await scale(r, 'bilinear', 2)], [[0.75 * 0.2 + 0.25 * 0.6, 0.25 * 0.6 + 0.75 * 1]]);
    close([await scale(r, 'area', 2)], [[0.4, 0.8]]);
    close([await scale([0.2, 0.6], 'bilinear', 4)], [[0.2, 0.3, 0.5, 0.6]]);
    close([await scale([0.2, 0.6], 'nearest-exact', 4)], [[0.2, 0.2, 0.6, 0.6]]);
    close([await scale([0.5, 0.5, 0.5], 'bicubic', 5)], [[0.5, 0.5, 0.5, 0.5, 0.5]]);
  });

  it('ImageScale keeps the aspect for a 0 side and crops the centre', async () => {
    const image = gray([
      [0, 0.2, 0.4, 0.6],
      [0.1, 0.3, 0.5, 0.7],
    ]);
    const half = await first('ImageScale', { image, upscale_method: 'area', width: 0, height: 1, crop: 'disabled' });
    expect([half.width, half.height]).toEqual([2, 1]);
    const same = await first('ImageScale', { image, upscale_method: 'area', width: 0, height: 0, crop: 'disabled' });
    expect(same).toBe(image);
    // 4x2 -> 1x1 with a centre crop keeps columns 1..2 and averages them.
    close(rows(await first('ImageScale', { image, upscale_method: 'area', width: 1, height: 1, crop: 'center' })), [[(0.2 + 0.4 + 0.3 + 0.5) / 4]]);
  });

  it('ImageBlend applies every mode and the factor, clamped to 0..1', async () => {
    const blend = async (a: number, b: number, blend_mode: string, blend_factor = 1) =>
      rows(await first('ImageBlend', { image1: gray([[a]]), image2: gray([[b]]), blend_factor, blend_mode }))[0][0];
    expect(await blend(0.25, 0.75, 'normal')).toBeCloseTo(0.75, 6);
    expect(await blend(0.25, 0.75, 'multiply')).toBeCloseTo(0.1875, 6);
    expect(await blend(0.25, 0.75, 'screen')).toBeCloseTo(0.8125, 6);
    expect(await blend(0.25, 0.75, 'overlay')).toBeCloseTo(0.375, 6);
    expect(await blend(0.75, 0.75, 'overlay')).toBeCloseTo(1 - 2 * 0.25 * 0.25, 6);
    expect(await blend(0.25, 0.75, 'soft_light')).toBeCloseTo(0.375, 6); // g(0.25) = 0.5
    expect(await blend(0.64, 0.25, 'soft_light')).toBeCloseTo(0.64 - 0.5 * 0.64 * 0.36, 6);
    expect(await blend(0.75, 0.25, 'difference')).toBeCloseTo(0.5, 6);
    expect(await blend(0.25, 0.75, 'difference')).toBe(0);
    expect(await blend(0.25, 0.75, 'multiply', 0.5)).toBeCloseTo(0.125 + 0.09375, 6);
  });

  it('ImageBlend resizes image2 to image1 and repeats a batch of one', async () => {
    const out = await first('ImageBlend', {
      image1: gray(G4, 2),
      image2: gray([
        [0.6, 0.6],
        [0.6, 0.6],
      ]),
      blend_factor: 1,
      blend_mode: 'normal',
    });
    expect([out.width, out.height, out.count]).toEqual([4, 4, 2]);
    for (const v of out.data) expect(v).toBeCloseTo(0.6, 6);
  });
});

describe('SaveImage and PreviewImage', () => {
  const batch = () => {
    const img = createImageBatch(3, 2, 2);
    for (let i = 0; i < img.data.length; i++) img.data[i] = ((i * 37) % 256) / 255;
    return img;
  };

  it('SaveImage commits one PNG per image that decodes back to it', async () => {
    const images = batch();
    const { ctx, committed, previews } = fakeContext();
    const result = await node('SaveImage').run({ images, filename_prefix: 'run' }, ctx);
    expect(result.outputs).toEqual([]);
    expect(result.ui).toEqual({ images: [1, 2].map((n) => ({ filename: `run_0000${n}_.png`, subfolder: '', type: 'output' })) });
    expect(committed.map((c) => [c.name, c.type, c.content_type])).toEqual([
      ['run_00001_.png', 'image', 'image/png'],
      ['run_00002_.png', 'image', 'image/png'],
    ]);
    for (const [b, c] of committed.entries()) {
      const png = decodePng(c.body);
      expect([png.width, png.height, png.channels]).toEqual([3, 2, 3]);
      for (const [i, v] of png.data.entries()) expect(v).toBeCloseTo(images.data[b * 18 + i], 6);
    }
    expect(previews).toEqual([]);
  });

  it('SaveImage flattens a folder prefix, defaults an empty one, and embeds prompt metadata', async () => {
    const { ctx, committed } = fakeContext();
    const images = gray([[0.5]]);
    await node('SaveImage').run(
      { images, filename_prefix: 'a/b', prompt: { 1: { class_type: 'EmptyImage' } }, extra_pnginfo: { workflow: { nodes: [] } } },
      ctx,
    );
    await node('SaveImage').run({ images, filename_prefix: '' }, ctx);
    expect(committed.map((c) => c.name)).toEqual(['a_b_00001_.png', 'ComfyUI_00001_.png']);
    expect(decodePng(committed[0].body).text).toEqual({ prompt: '{"1":{"class_type":"EmptyImage"}}', workflow: '{"nodes":[]}' });
  });

  it('PreviewImage emits PNG previews and keeps them only as temporary files', async () => {
    const images = batch();
    const { ctx, committed, previews } = fakeContext();
    const result = await node('PreviewImage').run({ images }, ctx);
    expect(committed.map((c) => c.temporary)).toEqual([true, true]);
    expect(committed.map((c) => c.body)).toEqual(previews.map((p) => p.bytes));
    expect(previews.map((p) => p.format)).toEqual(['png', 'png']);
    expect(decodePng(previews[1].bytes).data[0]).toBeCloseTo(images.data[18], 6);
    const ui = (result.ui as { images: { filename: string; subfolder: string; type: string }[] }).images;
    expect(ui.map((i) => [i.subfolder, i.type])).toEqual([
      ['', 'temp'],
      ['', 'temp'],
    ]);
    expect(ui[0].filename).toMatch(/^ComfyUI_temp_[a-z]{5}_00001_\.png$/);
    expect(committed.map((c) => c.name)).toEqual(ui.map((i) => i.filename));
  });
});

describe('LoadImage', () => {
  const ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
  const rgba = encodePng({ width: 2, height: 1, channels: 4, data: Uint8Array.of(255, 0, 0, 255, 0, 0, 255, 51) });
  const rgb = imageBatchToPng(gray([[0.2, 0.4]]));
  const assets = [
    { id: ID, name: 'cat.png', content_type: 'image/png', bytes: rgba },
    { id: '11111111-2222-4333-8444-555555555555', name: 'plain.png', content_type: 'image/png', bytes: rgb },
    {
      id: '99999999-2222-4333-8444-555555555555',
      name: 'photo.jpg',
      content_type: 'image/jpeg',
      bytes: Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 1, 2, 3),
    },
  ];
  const load = (image: string) => node('LoadImage').run({ image }, fakeContext({ assets }).ctx);

  it('loads by asset id and by name; the mask is 1 - alpha', async () => {
    for (const ref of [ID, ID.toUpperCase(), 'cat.png', 'cat.png [input]']) {
      const [image, mask] = (await load(ref)).outputs as [ImageBatch, MaskBatch];
      expect([image.width, image.height, image.count]).toEqual([2, 1, 1]);
      expect(Array.from(image.data)).toEqual([1, 0, 0, 0, 0, 1]);
      expect([mask.width, mask.height, mask.count]).toEqual([2, 1, 1]);
      expect(mask.data[0]).toBe(0);
      expect(mask.data[1]).toBeCloseTo(0.8, 6);
    }
  });

  it('gives a 64x64 zero mask for an image without alpha, as the reference does', async () => {
    const [image, mask] = (await load('plain.png')).outputs as [ImageBatch, MaskBatch];
    close(rows(image), [[0.2, 0.4]]);
    expect([mask.width, mask.height, mask.count, mask.data.every((v) => v === 0)]).toEqual([64, 64, 1, true]);
  });

  it('reports a missing image and a JPEG clearly', async () => {
    await expect(load('nope.png')).rejects.toMatchObject({ exception_type: 'FileNotFoundError', message: expect.stringContaining('nope.png') });
    await expect(load('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ exception_type: 'FileNotFoundError' });
    await expect(load('photo.jpg')).rejects.toThrow(/JPEG.*only supports PNG/);
  });
});

describe('LoadImageFromURL', () => {
  const png = encodePng({ width: 1, height: 1, channels: 4, data: Uint8Array.of(0, 255, 0, 0) });
  let server: Server;
  let base = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/img.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else if (path === '/hop') res.writeHead(302, { location: '/img.png' }).end();
      else if (path === '/loop') res.writeHead(307, { location: '/loop' }).end();
      else if (path === '/to-metadata') res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      else if (path === '/big') {
        res.writeHead(200, { 'content-type': 'image/png' }); // chunked: no length to refuse up front
        const chunk = new Uint8Array(64 * 1024);
        for (let i = 0; i < 16; i++) res.write(chunk);
        res.end();
      } else if (path === '/big-declared') res.writeHead(200, { 'content-length': String(5000) }).end(new Uint8Array(5000));
      else if (path === '/hang') {
        /* never answers */
      } else if (path === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const fetchImage = async (url: string, settings: Record<string, unknown> = {}, signal?: AbortSignal) =>
    node('LoadImageFromURL').run({ url }, fakeContext({ settings, signal }).ctx);
  const refused = async (promise: Promise<unknown>, message: RegExp) => {
    await expect(promise).rejects.toMatchObject({ exception_type: 'ImageDownloadError', name: 'ImageDownloadError' });
    await expect(promise).rejects.toThrow(message);
  };

  it('classifies literal addresses and obvious local names', () => {
    const blocked = [
      '127.0.0.1',
      '127.9.9.9',
      'localhost',
      'LOCALHOST.',
      'api.localhost',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '224.0.0.1',
      '[::1]',
      '[::]',
      '[fc00::1]',
      '[fd12:3456::1]',
      '[fe80::1]',
      '[::ffff:7f00:1]',
      '[::ffff:a00:1]',
      '[::ffff:169.254.1.1]',
      '[::7f00:1]',
      '[64:ff9b::a00:1]',
      '[2002:c0a8:101::1]',
      'printer.local',
      'metadata.google.internal',
      'intranet',
    ];
    const allowed = ['example.com', '93.184.216.34', '172.32.0.1', '192.169.0.1', '[2606:4700::1111]', '[::ffff:5db8:d822]', '11.0.0.1'];
    expect(blocked.filter((h) => !forbiddenHostReason(h))).toEqual([]);
    expect(allowed.filter((h) => forbiddenHostReason(h))).toEqual([]);
  });

  it('refuses private, loopback and link-local hosts, including the local test server', async () => {
    for (const url of [
      `${base}/img.png`,
      'http://localhost:1/x.png',
      'http://[::1]/x.png',
      'http://10.0.0.8/x.png',
      'http://169.254.169.254/latest',
      'http://[::ffff:127.0.0.1]/x',
      'http://0x7f.1/x',
      'http://2130706433/x',
      'http://0.0.0.0/x',
      'http://[fe80::1]/x',
      'http://192.168.0.1/x',
    ]) {
      await refused(fetchImage(url), /refusing to fetch/);
    }
    await refused(fetchImage('ftp://example.com/x.png'), /only http and https/);
    await refused(fetchImage('not a url'), /not a valid URL/);
  });

  it('checks every redirect hop and caps the number of hops', async () => {
    const real = globalThis.fetch;
    const seen: string[] = [];
    const fake = (location: string) => async (input: string | URL | Request) => {
      seen.push(String(input));
      return new Response(null, { status: 302, headers: { location } });
    };
    try {
      globalThis.fetch = fake('http://169.254.169.254/latest/meta-data/') as typeof fetch;
      await refused(fetchImage('https://images.example.com/cat.png'), /refusing to fetch 169\.254\.169\.254/);
      expect(seen).toEqual(['https://images.example.com/cat.png']);
      globalThis.fetch = fake('/again') as typeof fetch;
      await refused(fetchImage('https://images.example.com/cat.png'), /more than 5 redirects/);
    } finally {
      globalThis.fetch = real;
    }
    await refused(fetchImage(`${base}/loop`, { allowPrivateUrls: true }), /more than 5 redirects/);
    // Only `true` opens private hosts; a merely truthy setting does not.
    await refused(fetchImage(`${base}/to-metadata`, { allowPrivateUrls: 'yes' }), /refusing to fetch/);
  });

  it('with allowPrivateUrls, loads a PNG from the local server, following a redirect', async () => {
    for (const path of ['/img.png', '/hop']) {
      const [image, mask] = (await fetchImage(`${base}${path}`, { allowPrivateUrls: true })).outputs as [ImageBatch, MaskBatch];
      expect(Array.from(image.data)).toEqual([0, 1, 0]);
      expect(Array.from(mask.data)).toEqual([1]);
    }
  });

  it('enforces the size limit while streaming and from Content-Length', async () => {
    await refused(fetchImage(`${base}/big`, { allowPrivateUrls: true, maxDownloadBytes: 100_000 }), /larger than the 100000-byte limit/);
    await refused(fetchImage(`${base}/big-declared`, { allowPrivateUrls: true, maxDownloadBytes: 1000 }), /larger than the 1000-byte limit/);
  });

  it('enforces the time limit', async () => {
    const started = Date.now();
    await refused(fetchImage(`${base}/hang`, { allowPrivateUrls: true, downloadTimeoutMs: 150 }), /longer than 150 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports HTTP errors and non-PNG bodies as download errors', async () => {
    await refused(fetchImage(`${base}/missing`, { allowPrivateUrls: true }), /HTTP 404/);
    await refused(fetchImage(`${base}/text`, { allowPrivateUrls: true }), /only supports PNG/);
    await refused(fetchImage('http://127.0.0.1:1/x.png', { allowPrivateUrls: true }), /could not load the image/);
  });

  it('lets a cancel through as an abort, not as a download error', async () => {
    const controller = new AbortController();
    const pending = fetchImage(`${base}/hang`, { allowPrivateUrls: true }, controller.signal);
    setTimeout(() => controller.abort(new DOMException('canceled', 'AbortError')), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
