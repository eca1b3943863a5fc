// The video endpoint in upstream mode against a fake vendor (a real HTTP
// server): the request forwarded with the vendor's token, its states relayed
// to GET and to callbacks, its video streamed into an asset; each vendor
// failure a failed task with the generic body, retried where that may help,
// the vendor's own words only in the log.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../index.ts';
import { createUpstreamVideoProvider, type UpstreamVideoProvider } from '../providers/upstream/video.ts';
import { type FakeVideoVendor, startFakeVideoVendor, VIDEO_VENDOR_SECRET } from './fakes/vendor-video.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { b64, createTask, multiframe, type Receiver, startReceiver, waitForTask } from './helpers/video.ts';

const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
const logger: Logger = {
  info: () => {},
  warn: (message, fields) => void lines.push({ message, fields }),
  error: (message, fields) => void lines.push({ message, fields }),
};
const FAILED = { message: 'The video could not be generated.', details: [] };

describe.each(MODES)('upstream video provider (%s)', (mode) => {
  let vendor: FakeVideoVendor;
  let provider: UpstreamVideoProvider;
  let h: Harness;
  let receiver: Receiver;
  beforeAll(async () => {
    vendor = await startFakeVideoVendor();
    receiver = await startReceiver();
    provider = createUpstreamVideoProvider({ baseUrl: vendor.url, token: vendor.token, pollIntervalMs: 20, retryDelayMs: 50, headersTimeoutMs: 400 });
    h = await startHarness(mode, { providers: { video: provider }, allowPrivateUrls: true, logger });
  });
  afterAll(async () => {
    await h.close();
    await provider.close();
    await receiver.close();
    await vendor.close();
  });
  afterEach(() => {
    // Nothing a client saw may carry the vendor's words (checked per test below); the log may.
    vendor.calls.length = 0;
    receiver.received.length = 0;
  });

  it('forwards the request with the token, relays the states and stores the streamed video', async () => {
    const jpeg = b64(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1));
    // The vendor reads JPEG: only the local generator is limited to PNG.
    const body = multiframe({
      payload: '{"seed":7}',
      callback_url: `${receiver.url}/up`,
      image_settings: [{ key_image: jpeg, duration: 2 }, { key_image: 'https://cdn.example.com/b.png' }],
    });
    const created = await createTask(h, body);
    const { task, seen } = await waitForTask(h, created.task_id);
    expect(task.state).toBe('success');
    expect(seen.at(-1)).toBe('success');
    const create = vendor.calls.find((c) => c.method === 'POST')!;
    expect(create).toMatchObject({ path: '/videogen/multiframe', authorization: `Bearer ${vendor.token}` });
    expect(create.body).toEqual({
      model: 'gen-q2-turbo',
      resolution: '540p',
      payload: '{"seed":7}',
      start_image: '',
      image_settings: [
        { key_image: jpeg, duration: 2, prompt: '' },
        { key_image: 'https://cdn.example.com/b.png', duration: 5, prompt: '' },
      ],
    });
    // The output URL is fetched without the vendor's token.
    expect(vendor.calls.find((c) => c.path.startsWith('/outputs/'))?.authorization).toBeUndefined();
    expect(task.output).toMatchObject({ content_type: 'video/mp4', size_bytes: vendor.video.length, file_path: `videogen-${created.task_id}.mp4` });
    const bytes = new Uint8Array(await (await h.fetch(task.output.url)).arrayBuffer());
    expect(Buffer.from(bytes).equals(Buffer.from(vendor.video))).toBe(true);
    const got = await receiver.waitFor(3);
    expect(got.map((c) => c.body.state)).toEqual(['queueing', 'processing', 'success']);
  });

  it('retries a vendor that fails or times out, and carries on when it recovers', async () => {
    vendor.script({ kind: 'create-status', status: 503 }, { kind: 'poll-errors', count: 2 });
    const created = await createTask(h, multiframe());
    const { task } = await waitForTask(h, created.task_id);
    expect(task.state).toBe('success');
    expect(vendor.calls.filter((c) => c.method === 'POST')).toHaveLength(2);
    expect(vendor.calls.filter((c) => c.path.startsWith('/videogen/tasks/')).length).toBeGreaterThanOrEqual(5);

    vendor.script({ kind: 'create-hang' });
    const slow = await createTask(h, multiframe());
    expect((await waitForTask(h, slow.task_id)).task.state).toBe('success');
    expect(lines.some((l) => l.message === 'video task run failed')).toBe(false);
  });

  it.each([
    ['refuses the creation (401: the operator token)', [{ kind: 'create-status', status: 401 }], 1],
    ['refuses the creation (400)', [{ kind: 'create-status', status: 400 }], 1],
    [
      'keeps failing the creation (500)',
      [
        { kind: 'create-status', status: 500 },
        { kind: 'create-status', status: 500 },
        { kind: 'create-status', status: 500 },
      ],
      3,
    ],
    ['fails the task', [{ kind: 'task-failed' }], 1],
    ['loses the output', [{ kind: 'output-missing' }], 1],
    ['keeps failing the state polls', [{ kind: 'poll-errors', count: 100 }], 1],
  ] as const)('a vendor that %s gives a failed task with the generic body', async (_name, script, creates) => {
    vendor.script(...script);
    const created = await createTask(h, multiframe({ callback_url: `${receiver.url}/fail` }));
    const { task } = await waitForTask(h, created.task_id, ['success', 'failed'], {}, 30_000);
    expect(task.state).toBe('failed');
    expect(task.error).toEqual(FAILED);
    expect(task.output).toBeUndefined();
    expect(vendor.calls.filter((c) => c.method === 'POST')).toHaveLength(creates);
    const last = (await receiver.waitFor(1)).at(-1)!;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received.at(-1)!.body).toMatchObject({ state: 'failed', error: FAILED });
    expect(JSON.stringify([task, last.body, receiver.received.map((r) => r.body)])).not.toContain(VIDEO_VENDOR_SECRET);
    // The operator can tell what happened.
    expect(
      lines.some((l) => l.message === 'video task failed' && l.fields?.task_id === created.task_id && /vendor/.test(String(l.fields?.reason))),
    ).toBe(true);
  });
});
