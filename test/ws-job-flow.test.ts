// A real `ws` client follows jobs of its account through a real Node server:
// the reference's messages, fields and order from execution_start to the
// final `executing` with no node; `executed` names outputs by content; the
// file it names downloads with those bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blake3Of } from './helpers/assets.ts';
import { jobNow, saveImageWorkflow, submitOk } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { connectWs, type WsClient } from './helpers/ws-client.ts';
import { ALICE, BOB, startWsHarness, type WsHarness } from './helpers/ws-harness.ts';

let h: WsHarness;
let c: WsClient;
beforeAll(async () => {
  h = await startWsHarness();
  c = await connectWs(h.base, { token: ALICE.key, clientId: 'flow' });
});
afterAll(async () => {
  await c.close();
  await h.close();
});

/** Submits as Alice and waits for the job's final `executing {node: null}`; returns its messages. */
async function run(workflow: Record<string, unknown>) {
  const job = await submitOk(h.as(ALICE.key), workflow);
  await c.waitFor(`end of ${job.id}`, (f) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === job.id && f.data.node === null);
  return { id: job.id as string, messages: c.jobMessages(job.id) };
}

/** The sequence without progress_state, each as type or type:node. */
const sequence = (messages: Array<{ type: string; data: any }>) =>
  messages
    .filter((m) => m.type !== 'progress_state')
    .map((m) => (m.type === 'executing' || m.type === 'executed' ? `${m.type}:${m.data.node}` : m.type));

/** What a SaveImage job (e -> s) sends, in the reference's order. */
const SAVE_IMAGE_SEQUENCE = [
  'execution_start',
  'execution_cached',
  'executing:e',
  'executing:s',
  'executed:s',
  'execution_success',
  'executing:null',
];

const nearNow = (t: unknown) => typeof t === 'number' && Math.abs(t - Date.now()) < 60_000;

describe('ws job flow', () => {
  it('a SaveImage job: reference order and fields, executed with a content-addressed file name', async () => {
    const { id, messages } = await run(saveImageWorkflow(0x123456, 4, 3, 'flow'));
    expect(sequence(messages)).toEqual(SAVE_IMAGE_SEQUENCE);
    const byType = (t: string) => messages.filter((m) => m.type === t).map((m) => m.data);
    const [start] = byType('execution_start');
    expect(Object.keys(start).sort()).toEqual(['prompt_id', 'timestamp']);
    expect(nearNow(start.timestamp)).toBe(true);
    expect(byType('execution_cached')).toEqual([{ nodes: [], prompt_id: id, timestamp: expect.any(Number) }]);
    expect(byType('executing')).toEqual([
      { node: 'e', display_node: 'e', prompt_id: id },
      { node: 's', display_node: 's', prompt_id: id },
      { node: null, display_node: null, prompt_id: id },
    ]);
    const [executed] = byType('executed');
    expect(executed).toEqual({
      node: 's',
      display_node: 's',
      prompt_id: id,
      output: { images: [{ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'output' }] },
    });
    expect(byType('execution_success')).toEqual([{ prompt_id: id, timestamp: expect.any(Number) }]);

    // progress_state: every node seen, with the reference's fields; the last one says all finished.
    const states = byType('progress_state');
    expect(states.length).toBeGreaterThanOrEqual(4);
    expect(states.at(-1)).toEqual({
      prompt_id: id,
      nodes: Object.fromEntries(
        ['e', 's'].map((n) => [
          n,
          {
            value: 1,
            max: 1,
            state: 'finished',
            node_id: n,
            prompt_id: id,
            display_node_id: n,
            parent_node_id: null,
            real_node_id: n,
          },
        ]),
      ),
    });
    expect(states[0].nodes).toEqual({ e: expect.objectContaining({ state: 'running', value: 0, max: 1 }) });

    // The name is the output's blake3 plus its extension: the bytes behind it hash to it.
    const name: string = executed.output.images[0].filename;
    const job = await jobNow(h.as(ALICE.key), id);
    expect(job.outputs).toHaveLength(1);
    expect(`${job.outputs[0].hash.slice('blake3:'.length)}.png`).toBe(name);
    const bytes = new Uint8Array(await (await h.fetch(job.outputs[0].url)).arrayBuffer());
    expect(await blake3Of(bytes)).toBe(`blake3:${name.slice(0, 64)}`);
    expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('the executed file downloads through /api/view’s redirect to a signed URL', async () => {
    const { messages } = await run(saveImageWorkflow(0x654321, 2, 2, 'view'));
    const name: string = messages.find((m) => m.type === 'executed')!.data.output.images[0].filename;
    const res = await h.fetch(`/api/view?filename=${name}&subfolder=&type=output`, { headers: { 'x-api-key': ALICE.key }, redirect: 'manual' });
    expect(res.status).toBe(302);
    const signed = await fetch(res.headers.get('location')!, { redirect: 'follow' });
    expect(signed.status).toBe(200);
    const bytes = new Uint8Array(await signed.arrayBuffer());
    expect(await blake3Of(bytes)).toBe(`blake3:${name.slice(0, 64)}`);
    // The name is Alice's: another account does not resolve it.
    const other = await h.fetch(`/api/view?filename=${name}&type=output`, { headers: { 'x-api-key': BOB.key }, redirect: 'manual' });
    expect(other.status).toBe(404);
  });

  it('the spec’s client flow: POST /api/prompt with client_id and X-API-Key, followed by prompt_id over /ws', async () => {
    const res = await h.fetch('/api/prompt', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ALICE.key },
      body: JSON.stringify({ prompt: saveImageWorkflow(0x0a0b0c, 2, 3, 'prompt'), client_id: 'flow' }),
    });
    expect(res.status).toBe(200);
    const { prompt_id } = (await res.json()) as { prompt_id: string };
    await c.waitFor('end', (f) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === prompt_id && f.data.node === null);
    expect(sequence(c.jobMessages(prompt_id))).toEqual(SAVE_IMAGE_SEQUENCE);
    const executed = c.jobMessages(prompt_id).find((m) => m.type === 'executed')!.data;
    expect(executed.output.images[0].filename).toMatch(/^[0-9a-f]{64}\.png$/);

    // POST /api/interrupt stops the running job: execution_interrupted.
    const slow = await h.fetch('/api/prompt', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ALICE.key },
      body: JSON.stringify({ prompt: waitWorkflow(4, 100, 100) }),
    });
    const slowId = ((await slow.json()) as { prompt_id: string }).prompt_id;
    await c.waitFor('progress', (f) => f.kind === 'text' && f.type === 'progress' && f.data.prompt_id === slowId);
    const interrupt = await h.fetch('/api/interrupt', { method: 'POST', headers: { 'x-api-key': ALICE.key } });
    expect(interrupt.status).toBe(200);
    const stopped = await c.waitFor('interrupted', (f) => f.kind === 'text' && f.type === 'execution_interrupted' && f.data.prompt_id === slowId);
    expect(stopped.kind === 'text' && stopped.data).toMatchObject({ node_id: 'w2', node_type: 'Wait', executed: ['w1'] });
  });

  it('progress {value, max, prompt_id, node} per step; a second run reports its cached node', async () => {
    const first = await run(waitWorkflow(7, 5, 3));
    expect(sequence(first.messages)).toEqual([
      'execution_start',
      'execution_cached',
      'executing:w1',
      'executing:w2',
      'progress',
      'progress',
      'progress',
      'executing:w3',
      'executed:w3',
      'execution_success',
      'executing:null',
    ]);
    expect(first.messages.filter((m) => m.type === 'progress').map((m) => m.data)).toEqual(
      [1, 2, 3].map((value) => ({ value, max: 3, prompt_id: first.id, node: 'w2' })),
    );
    // Each progress is preceded by a progress_state holding that step (the reference's order).
    const i = first.messages.findIndex((m) => m.type === 'progress');
    expect(first.messages[i - 1]).toMatchObject({ type: 'progress_state', data: { nodes: { w2: { value: 1, max: 3, state: 'running' } } } });
    expect(first.messages.find((m) => m.type === 'executed')!.data.output).toEqual({ text: ['7'] });

    const second = await run(waitWorkflow(7, 5, 1));
    const cached = second.messages.find((m) => m.type === 'execution_cached')!.data;
    expect(cached).toEqual({ nodes: ['w1'], prompt_id: second.id, timestamp: expect.any(Number) });
    expect(sequence(second.messages)).not.toContain('executing:w1');
  });

  it('status messages carry the account’s queue as it changes, with no sid; the last comes between success and executing null', async () => {
    const from = c.frames.length;
    const { id } = await run(waitWorkflow(8, 5, 1));
    // After the job's end, as the reference files it: one more status, which counts nothing left, then `executing` null.
    const endAt = c.frames.findIndex((f) => f.kind === 'text' && f.type === 'execution_success' && f.data.prompt_id === id);
    const last = await c.waitFor('status after success', (f) => f.kind === 'text' && f.type === 'status', 3000, endAt);
    expect(last).toEqual({ kind: 'text', type: 'status', data: { status: { exec_info: { queue_remaining: 0 } } } });
    expect(c.frames.slice(endAt + 1, endAt + 3)).toEqual([
      last,
      { kind: 'text', type: 'executing', data: { node: null, display_node: null, prompt_id: id } },
    ]);
    // Before it: the job queued and running counted it.
    const before = c.frames.slice(from, endAt).filter((f) => f.kind === 'text' && f.type === 'status') as any[];
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.map((f) => f.data.status.exec_info.queue_remaining)).toContain(1);
  });
});
