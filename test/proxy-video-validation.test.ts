// POST /proxy/videogen/multiframe refusals: every bound of every field, all
// problems of a body at once (one detail each), the outbound URL policy,
// the local provider's own limits (PNG only, key-frame size from the header,
// refused before any charge), then 401 and 402 in the surface's
// `{message, details}` body, in process and through a real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreditsProvider } from '../core/jobs/credits.ts';
import { TASK_STATES } from '../core/proxy/video/states.ts';
import { concatBytes } from '../lib/bytes.ts';
import { PNG_SIGNATURE, writeChunk } from '../lib/png/chunks.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { recordingCredits } from './helpers/credits.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { BLUE, b64, createTask, GREEN, multiframe, postTask, RED, taskPath } from './helpers/video.ts';

const INVALID = 'The request is not valid.';
const frames = (n: number, extra: Record<string, unknown> = {}) => Array.from({ length: n }, () => ({ key_image: RED, duration: 1, ...extra }));

async function refused(h: Harness, body: unknown, headers: Record<string, string> = {}): Promise<string[]> {
  const res = await postTask(h, body, headers);
  const json = (await res.json()) as any;
  expect({ status: res.status, message: json.message, keys: Object.keys(json).sort() }).toEqual({
    status: 400,
    message: INVALID,
    keys: ['details', 'message'],
  });
  expect(Array.isArray(json.details)).toBe(true);
  return json.details;
}

describe.each(MODES)('multiframe validation (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(() => h.close());

  it('answers a valid request with the task record: defaults filled in, credits, created', async () => {
    const task = await createTask(h, {
      model: 'gen-q2-pro',
      image_settings: [{ key_image: RED }, { key_image: `data:image/png;base64,${BLUE}`, duration: 2.5, prompt: 'p' }],
    });
    expect(Object.keys(task).sort()).toEqual([
      'created_at',
      'credits',
      'image_settings',
      'model',
      'payload',
      'resolution',
      'start_image',
      'state',
      'task_id',
      'updated_at',
    ]);
    expect(task).toMatchObject({
      state: 'created',
      model: 'gen-q2-pro',
      resolution: '720p',
      payload: '',
      start_image: '',
      image_settings: [
        { key_image: RED, duration: 5, prompt: '' },
        { key_image: `data:image/png;base64,${BLUE}`, duration: 2.5, prompt: 'p' },
      ],
      // 7.5 s of gen-q2-pro at 720p, 4 credits a second.
      credits: 30,
    });
    expect(task.task_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(task.created_at).toISOString()).toBe(task.created_at);
  });

  it('accepts every bound at its edge', async () => {
    const edge = await createTask(h, {
      model: 'gen-q2-turbo',
      resolution: '1080p',
      payload: 'x'.repeat(1_048_576),
      start_image: GREEN,
      callback_url: 'https://callbacks.example.com/video',
      image_settings: [...frames(8, { duration: 10, prompt: 'p'.repeat(2000) }), { key_image: 'https://images.example.com/k.png', duration: 1 }],
    });
    expect(edge.image_settings).toHaveLength(9);
    expect(edge.payload).toHaveLength(1_048_576);
    expect(edge.callback_url).toBe('https://callbacks.example.com/video');
    // 81 s of gen-q2-turbo at 1080p, 4 credits a second.
    expect(edge.credits).toBe(324);
    expect((await createTask(h, { model: 'gen-q2-turbo', image_settings: frames(2) })).image_settings).toHaveLength(2);
  });

  it('reports each frame-count, duration, prompt, model, resolution and payload bound', async () => {
    expect(await refused(h, multiframe({ image_settings: frames(1) }))).toEqual(['image_settings: must have at least 2 entries']);
    expect(await refused(h, multiframe({ image_settings: frames(10) }))).toEqual(['image_settings: must have at most 9 entries']);
    expect(await refused(h, multiframe({ image_settings: [] }))).toEqual(['image_settings: must have at least 2 entries']);
    expect(await refused(h, multiframe({ image_settings: 'two' }))).toEqual(['image_settings: must be an array of frame settings']);
    expect(await refused(h, multiframe({ image_settings: [RED, { key_image: RED }] }))).toEqual(['image_settings[0]: must be an object']);
    expect(
      await refused(
        h,
        multiframe({
          image_settings: [
            { key_image: RED, duration: 0.99 },
            { key_image: RED, duration: 10.01 },
          ],
        }),
      ),
    ).toEqual(['image_settings[0].duration: must be at least 1', 'image_settings[1].duration: must be at most 10']);
    expect(
      await refused(
        h,
        multiframe({
          image_settings: [
            { key_image: RED, duration: '5' },
            { key_image: RED, duration: null },
          ],
        }),
      ),
    ).toEqual(['image_settings[0].duration: must be a number of seconds', 'image_settings[1].duration: must be a number of seconds']);
    expect(
      await refused(
        h,
        multiframe({
          image_settings: [
            { key_image: RED, prompt: 'p'.repeat(2001) },
            { key_image: RED, prompt: 7 },
          ],
        }),
      ),
    ).toEqual(['image_settings[0].prompt: must be at most 2000 characters', 'image_settings[1].prompt: must be a string']);
    expect(await refused(h, multiframe({ model: 'gen-q1' }))).toEqual(['model: must be one of gen-q2-pro, gen-q2-turbo']);
    expect(await refused(h, multiframe({ model: undefined }))).toEqual(['model: is required']);
    expect(await refused(h, multiframe({ resolution: '4k' }))).toEqual(['resolution: must be one of 540p, 720p, 1080p']);
    expect(await refused(h, multiframe({ payload: 'x'.repeat(1_048_577) }))).toEqual(['payload: must be at most 1048576 characters']);
    expect(await refused(h, multiframe({ payload: { a: 1 } }))).toEqual(['payload: must be a string']);
  });

  it('reports what is wrong with key images, start_image and callback_url', async () => {
    const text = b64(new TextEncoder().encode('hello, not an image'));
    const details = await refused(
      h,
      multiframe({
        start_image: 'not base64!',
        callback_url: 'ftp://callbacks.example.com/x',
        image_settings: [
          {},
          { key_image: 42 },
          { key_image: '' },
          { key_image: text },
          { key_image: 'ftp://images.example.com/a.png' },
          { key_image: `https://images.example.com/${'a'.repeat(2048)}` },
          { key_image: 'http://exa mple.com/a.png' },
          { key_image: 'iVBORw0KGgo' },
        ],
      }),
    );
    expect(details).toEqual([
      'image_settings[0].key_image: is required',
      'image_settings[1].key_image: must be a string',
      'image_settings[2].key_image: must be a base64 image or an http(s) URL',
      'image_settings[3].key_image: must be a PNG, JPEG or WebP image in base64',
      'image_settings[4].key_image: must be a base64 image (standard alphabet, padded) or an http(s) URL',
      'image_settings[5].key_image: a URL must be at most 2048 characters',
      'image_settings[6].key_image: not a valid URL: http://exa mple.com/a.png',
      'image_settings[7].key_image: must be a base64 image (standard alphabet, padded) or an http(s) URL',
      'start_image: must be a base64 image (standard alphabet, padded) or an http(s) URL',
      'callback_url: must be an http or https URL',
    ]);
    expect(await refused(h, multiframe({ callback_url: `https://example.com/${'a'.repeat(2030)}` }))).toEqual([
      'callback_url: must be at most 2048 characters',
    ]);
    expect(await refused(h, multiframe({ callback_url: 'https://' }))).toEqual(['callback_url: must be an http or https URL']);
  });

  it('refuses images beyond the size limits', async () => {
    // A PNG signature and zeros: one byte over 10 MiB once decoded; and a string over the character bound.
    const big = new Uint8Array(10 * 1024 * 1024 + 1);
    big.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const details = await refused(h, multiframe({ image_settings: [{ key_image: b64(big) }, { key_image: 'A'.repeat(14_000_000) }] }));
    expect(details).toEqual([
      'image_settings[0].key_image: the image is larger than 10485760 bytes',
      expect.stringMatching(/^image_settings\[1\]\.key_image: must be at most \d+ characters$/),
    ]);
  });

  it('names every unknown field, in the body and in frame settings', async () => {
    expect(
      await refused(h, { ...multiframe(), seed: 1, aspect_ratio: '16:9', image_settings: [{ key_image: RED, weight: 1 }, { key_image: RED }] }),
    ).toEqual([
      'seed: is not a field of this request',
      'aspect_ratio: is not a field of this request',
      'image_settings[0].weight: is not a field of this request',
    ]);
  });

  it('reports all the problems of one body at once, one detail per field', async () => {
    const details = await refused(h, {
      image_settings: [
        { key_image: RED, duration: 0 },
        { duration: 11, prompt: 'p'.repeat(2001), extra: true },
      ],
      model: 'gen-x',
      resolution: '360p',
      payload: 5,
      callback_url: 'mailto:me@example.com',
      colour: 'red',
    });
    expect(details).toEqual([
      'image_settings[0].duration: must be at least 1',
      'image_settings[1].key_image: is required',
      'image_settings[1].duration: must be at most 10',
      'image_settings[1].prompt: must be at most 2000 characters',
      'model: must be one of gen-q2-pro, gen-q2-turbo',
      'resolution: must be one of 540p, 720p, 1080p',
      'payload: must be a string',
      'callback_url: must be an http or https URL',
      'colour: is not a field of this request',
      'image_settings[1].extra: is not a field of this request',
    ]);
  });

  it('refuses private, loopback and link-local URLs, since this service does not allow them', async () => {
    const details = await refused(
      h,
      multiframe({
        callback_url: 'http://127.0.0.1:9/callback',
        start_image: 'http://169.254.169.254/latest/meta-data',
        image_settings: [{ key_image: 'http://10.0.0.5/a.png' }, { key_image: 'http://[::1]/b.png' }, { key_image: 'http://localhost:8080/c.png' }],
      }),
    );
    const hint = ' (private, loopback and link-local addresses are not allowed on this service)';
    expect(details).toEqual([
      `start_image: refusing to fetch 169.254.169.254: it is a link-local address${hint}`,
      `image_settings[0].key_image: refusing to fetch 10.0.0.5: it is a private address${hint}`,
      `image_settings[1].key_image: refusing to fetch [::1]: it is a loopback address${hint}`,
      `image_settings[2].key_image: refusing to fetch localhost:8080: it is a loopback name${hint}`,
      `callback_url: refusing to fetch 127.0.0.1:9: it is a loopback address${hint}`,
    ]);
  });

  it('refuses key frames the local generator cannot read', async () => {
    const jpeg = b64(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1));
    expect(await refused(h, multiframe({ start_image: jpeg }))).toEqual(['start_image: the local generator reads PNG images only, not JPEG']);
  });

  it('counts payload and prompt characters as code points: 🎬 is one', async () => {
    const edge = await createTask(h, multiframe({ payload: '🎬'.repeat(1_048_576), image_settings: frames(2, { prompt: '🎬'.repeat(2000) }) }));
    expect(edge.payload).toBe('🎬'.repeat(1_048_576));
    expect(edge.image_settings[0].prompt).toBe('🎬'.repeat(2000));
    expect(await refused(h, multiframe({ payload: '🎬'.repeat(1_048_577) }))).toEqual(['payload: must be at most 1048576 characters']);
    expect(await refused(h, multiframe({ payload: `${'🎬'.repeat(1_048_575)}ab` }))).toEqual(['payload: must be at most 1048576 characters']);
    expect(await refused(h, multiframe({ image_settings: frames(2, { prompt: '🎬'.repeat(2001) }) }))).toEqual([
      'image_settings[0].prompt: must be at most 2000 characters',
      'image_settings[1].prompt: must be at most 2000 characters',
    ]);
  });

  it('answers bodies that are not a JSON object with 400 in the same shape', async () => {
    for (const [body, type] of [
      ['{"model":', 'application/json'],
      ['[1,2]', 'application/json'],
      ['null', 'application/json'],
      ['model=x', 'application/x-www-form-urlencoded'],
    ]) {
      const res = await postTask(h, body, { 'content-type': type });
      const json = (await res.json()) as any;
      expect(res.status).toBe(400);
      expect(json).toEqual({ message: expect.any(String), details: expect.any(Array) });
    }
    expect(await refused(h, '[1,2]')).toEqual(['(body): must be a JSON object']);
  });

  it('answers 404 in the same shape for a task that does not exist', async () => {
    const res = await h.fetch(taskPath('00000000-0000-4000-8000-000000000000'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'No video task with this id.', details: [] });
  });
});

/** A PNG of `width` x `height` as its header declares it, with a few bytes of image data (decoding it would fail). */
function declaredPng(width: number, height: number, { colorType = 2, ihdrType = 'IHDR' } = {}): string {
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr.set([8, colorType, 0, 0, 0], 8);
  return b64(
    concatBytes([
      PNG_SIGNATURE,
      writeChunk(ihdrType, ihdr),
      writeChunk('IDAT', Uint8Array.of(0x78, 0x9c, 3, 0)),
      writeChunk('IEND', new Uint8Array(0)),
    ]),
  );
}

describe.each(MODES)('local key frame headers (%s)', (mode) => {
  let h: Harness;
  const storage = createMemoryStorage();
  const credits = recordingCredits();
  const tasks = () => storage.metadata.listVideoTasksByState([...TASK_STATES], 100);
  beforeAll(async () => {
    h = await startHarness(mode, { storage, credits: credits.provider });
  });
  afterAll(() => h.close());

  it('refuses a base64 PNG declaring a size beyond the key-frame limits, or a broken header, with 400 before charging', async () => {
    const broken = new Uint8Array(64);
    broken.set(PNG_SIGNATURE);
    const badCrc = Uint8Array.from(Buffer.from(declaredPng(4, 4), 'base64'));
    badCrc[29] ^= 0xff;
    const details = await refused(
      h,
      multiframe({
        start_image: `data:image/png;base64,${declaredPng(60_000, 60_000)}`,
        image_settings: [
          { key_image: RED },
          { key_image: declaredPng(8193, 1) },
          { key_image: declaredPng(4097, 4097) },
          { key_image: b64(broken) },
          { key_image: declaredPng(4, 4, { ihdrType: 'IDAT' }) },
          { key_image: b64(badCrc) },
          { key_image: declaredPng(4, 4, { colorType: 5 }) },
          { key_image: BLUE },
        ],
      }),
    );
    const limit = 'beyond the limit of 8192 per side and 16777216 pixels';
    expect(details).toEqual([
      `start_image: PNG is 60000x60000, ${limit}`,
      `image_settings[1].key_image: PNG is 8193x1, ${limit}`,
      `image_settings[2].key_image: PNG is 4097x4097, ${limit}`,
      'image_settings[3].key_image: the PNG does not start with a valid IHDR header',
      'image_settings[4].key_image: the PNG does not start with a valid IHDR header',
      'image_settings[5].key_image: PNG chunk IHDR has a CRC mismatch',
      'image_settings[6].key_image: PNG colour type 5 is not valid',
    ]);
    // Line breaks in the base64 do not hide the header.
    const wrapped = declaredPng(60_000, 60_000).replace(/.{76}/g, '$&\r\n');
    expect(await refused(h, multiframe({ image_settings: [{ key_image: RED }, { key_image: wrapped }] }))).toEqual([
      `image_settings[1].key_image: PNG is 60000x60000, ${limit}`,
    ]);
    expect(credits.charges).toEqual([]);
    expect(await tasks()).toEqual([]);
  });

  it('takes key frames at the limits (8192 per side, 16777216 pixels), charged and stored as a task', async () => {
    const [charged, stored] = [credits.charges.length, (await tasks()).map((t) => t.id)];
    const task = await createTask(
      h,
      multiframe({
        image_settings: [
          { key_image: declaredPng(8192, 2048), duration: 1 },
          { key_image: declaredPng(2048, 8192), duration: 1 },
        ],
      }),
    );
    expect(credits.charges.slice(charged)).toEqual([['local', task.credits, 'multi-frame video']]);
    expect((await tasks()).map((t) => t.id).sort()).toEqual([...stored, task.task_id].sort());
  });
});

describe.each(MODES)('multiframe auth and credits (%s)', (mode) => {
  let h: Harness;
  const charges: Array<[string, number, string]> = [];
  let allowed = true;
  const credits: CreditsProvider = {
    hasCredits: async () => allowed,
    charge: async (account, amount, what) => {
      charges.push([account, amount, what]);
      return allowed;
    },
  };
  beforeAll(async () => {
    h = await startHarness(mode, {
      accounts: [
        { id: 'alice', apiKeys: ['key-alice'] },
        { id: 'bob', apiKeys: ['key-bob'] },
      ],
      credits,
    });
  });
  afterAll(() => h.close());
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  it('401 without a key or with an unknown one, before the body is looked at', async () => {
    for (const headers of [{}, as('nope'), { authorization: 'Basic abc' }]) {
      const res = await postTask(h, { not: 'valid' }, headers);
      const json = (await res.json()) as any;
      expect(res.status).toBe(401);
      expect(json).toEqual({ message: expect.any(String), details: [] });
    }
    expect((await h.fetch(taskPath('x'))).status).toBe(401);
    expect(charges).toEqual([]);
  });

  it('charges the task credits to the caller and answers 402 when the provider refuses', async () => {
    const task = await createTask(h, multiframe({ model: 'gen-q2-pro', resolution: '1080p' }), as('key-alice'));
    // 2.5 s of gen-q2-pro at 1080p, 8 credits a second.
    expect(task.credits).toBe(20);
    expect(charges).toEqual([['alice', 20, 'multi-frame video']]);
    allowed = false;
    const res = await postTask(h, multiframe(), as('key-bob'));
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ message: expect.stringMatching(/credits/), details: [] });
    expect(charges.at(-1)).toEqual(['bob', 3, 'multi-frame video']);
    // An invalid request is refused before anything is charged.
    const before = charges.length;
    expect((await postTask(h, multiframe({ model: 'x' }), as('key-bob'))).status).toBe(400);
    expect(charges).toHaveLength(before);
    allowed = true;
  });

  it('shows a task to its own account only', async () => {
    const task = await createTask(h, multiframe(), as('key-alice'));
    expect((await h.fetch(taskPath(task.task_id), { headers: as('key-alice') })).status).toBe(200);
    const other = await h.fetch(taskPath(task.task_id), { headers: as('key-bob') });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ message: 'No video task with this id.', details: [] });
  });
});
