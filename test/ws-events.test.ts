// The `/ws` stream's other events through a real Node server and real `ws`
// clients: previews as PREVIEW_IMAGE (1), or PREVIEW_IMAGE_WITH_METADATA (4)
// to clients that announced supports_preview_metadata; TEXT (3) frames;
// execution_error for a failing node; execution_interrupted after a cancel.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelJob, submitOk, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { connectWs, type WsClient } from './helpers/ws-client.ts';
import { ALICE, startWsHarness, type WsHarness } from './helpers/ws-harness.ts';

let h: WsHarness;
let plain: WsClient;
let flagged: WsClient;
beforeAll(async () => {
  h = await startWsHarness();
  plain = await connectWs(h.base, { token: ALICE.key });
  flagged = await connectWs(h.base, { token: ALICE.key });
  flagged.send({ type: 'feature_flags', data: { supports_preview_metadata: true } });
  await flagged.waitFor('feature_flags reply', (f) => f.kind === 'text' && f.type === 'feature_flags');
});
afterAll(async () => {
  await plain.close();
  await flagged.close();
  await h.close();
});

const ended = (id: string) => (f: { kind: string; type: unknown; data?: any }) =>
  f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === id && f.data.node === null;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at);

/**
 * A traceback keeps its frames (file names, lines) but not where the files
 * live on the server: no directory of this checkout, no absolute path or
 * file: URL.
 */
function expectNoServerPaths(traceback: string): void {
  expect(traceback).toMatch(/at \S+ \([\w.-]+\.ts:\d+:\d+\)/);
  expect(traceback).not.toContain(process.cwd());
  expect(traceback).not.toMatch(/file:\/\/|(?:^|[\s("'])\/[^\s/]+\//m);
}

describe('ws events', () => {
  it('previews: type 1 (image_type 2 = PNG) without flags, type 4 with metadata after feature_flags', async () => {
    const plainFrom = plain.frames.length;
    const flaggedFrom = flagged.frames.length;
    const job = await submitOk(h.as(ALICE.key), {
      e: { class_type: 'EmptyImage', inputs: { width: 5, height: 4, batch_size: 1, color: 0xff8800 } },
      p: { class_type: 'PreviewImage', inputs: { images: ['e', 0] } },
    });
    await plain.waitFor('end', ended(job.id));
    await flagged.waitFor('end', ended(job.id));
    const binaries = (c: WsClient, from: number) => c.frames.slice(from).flatMap((f) => (f.kind === 'binary' ? [f.bytes] : []));

    const [one] = binaries(plain, plainFrom);
    expect(binaries(plain, plainFrom)).toHaveLength(1);
    expect(u32(one, 0)).toBe(1);
    expect(u32(one, 4)).toBe(2);
    const image = one.subarray(8);
    expect([...image.subarray(0, 8)]).toEqual(PNG);

    const [four] = binaries(flagged, flaggedFrom);
    expect(binaries(flagged, flaggedFrom)).toHaveLength(1);
    expect(u32(four, 0)).toBe(4);
    const len = u32(four, 4);
    expect(JSON.parse(new TextDecoder().decode(four.subarray(8, 8 + len)))).toEqual({
      node_id: 'p',
      prompt_id: job.id,
      display_node_id: 'p',
      parent_node_id: null,
      real_node_id: 'p',
      image_type: 'image/png',
    });
    expect([...four.subarray(8 + len)]).toEqual([...image]);

    // A preview's executed output keeps its temp reference: only outputs are renamed.
    const executed = plain.jobMessages(job.id).find((m) => m.type === 'executed')!.data;
    expect(executed.output.images).toEqual([{ filename: expect.stringMatching(/^ComfyUI_temp_[a-z]{5}_00001_\.png$/), subfolder: '', type: 'temp' }]);
  });

  it('text events: TEXT (3) frames [3][node_id length][node_id][text], to every client', async () => {
    const from = plain.frames.length;
    const job = await submitOk(h.as(ALICE.key), { t: { class_type: 'Say', inputs: { text: 'héllo ✓' } } });
    await plain.waitFor('end', ended(job.id));
    const frames = plain.frames.slice(from).flatMap((f) => (f.kind === 'binary' ? [f.bytes] : []));
    expect(frames).toHaveLength(1);
    expect([...frames[0]]).toEqual([0, 0, 0, 3, 0, 0, 0, 1, ...new TextEncoder().encode('t'), ...new TextEncoder().encode('héllo ✓')]);
    await flagged.waitFor('text frame', (f) => f.kind === 'binary' && f.type === 3);
  });

  it('a failing node: execution_error with the reference fields, then executing null', async () => {
    const job = await submitOk(h.as(ALICE.key), {
      n: { class_type: 'Number', inputs: { value: 41 } },
      f: { class_type: 'Fail', inputs: { value: ['n', 0] } },
      s: { class_type: 'Show', inputs: { value: ['f', 0] } },
    });
    await plain.waitFor('end', ended(job.id));
    const messages = plain.jobMessages(job.id).filter((m) => m.type !== 'progress_state');
    expect(messages.map((m) => m.type)).toEqual(['execution_start', 'execution_cached', 'executing', 'executing', 'execution_error', 'executing']);
    const error = messages.find((m) => m.type === 'execution_error')!.data;
    expect(Object.keys(error).sort()).toEqual([
      'current_inputs',
      'current_outputs',
      'exception_message',
      'exception_type',
      'executed',
      'node_id',
      'node_type',
      'prompt_id',
      'timestamp',
      'traceback',
    ]);
    expect(error).toMatchObject({
      prompt_id: job.id,
      node_id: 'f',
      node_type: 'Fail',
      executed: ['n'],
      exception_message: 'cannot do that',
      exception_type: 'TypeError',
      current_inputs: {},
      current_outputs: [],
    });
    expect(Array.isArray(error.traceback)).toBe(true);
    expect(error.traceback.length).toBeGreaterThan(0);
    for (const line of error.traceback) expect(typeof line).toBe('string');
    expectNoServerPaths(error.traceback.join(''));
    expect(messages.some((m) => m.type === 'execution_success')).toBe(false);
    // The same traceback, its paths scrubbed too, on the v2 job and in the /api/history entry.
    const failed = await waitForJob(h.as(ALICE.key), job.id, 'failed');
    expectNoServerPaths(failed.error.traceback);
    expect(failed.error.traceback.split('\n').map((line: string) => `${line}\n`)).toEqual(error.traceback);
    const history: any = await (await h.fetch(`/api/history/${job.id}`, { headers: { 'x-api-key': ALICE.key } })).json();
    const [, filed] = history[job.id].status.messages.find(([type]: [string]) => type === 'execution_error');
    expect(filed.traceback).toEqual(error.traceback);
  });

  it('a canceled running job: execution_interrupted at the node it was in, then executing null', async () => {
    const job = await submitOk(h.as(ALICE.key), waitWorkflow(3, 100, 100));
    await plain.waitFor('first progress', (f) => f.kind === 'text' && f.type === 'progress' && f.data.prompt_id === job.id);
    const { res } = await cancelJob(h.as(ALICE.key), job.id);
    expect(res.status).toBe(200);
    await plain.waitFor('end', ended(job.id));
    const messages = plain.jobMessages(job.id).filter((m) => m.type !== 'progress_state' && m.type !== 'progress');
    expect(messages.map((m) => m.type)).toEqual([
      'execution_start',
      'execution_cached',
      'executing',
      'executing',
      'execution_interrupted',
      'executing',
    ]);
    const interrupted = messages.find((m) => m.type === 'execution_interrupted')!.data;
    expect(interrupted).toEqual({ prompt_id: job.id, node_id: 'w2', node_type: 'Wait', executed: ['w1'], timestamp: expect.any(Number) });
    // Every client of the account saw the same.
    await flagged.waitFor('interrupted', (f) => f.kind === 'text' && f.type === 'execution_interrupted' && f.data.prompt_id === job.id);
  });
});
