// Interrupts on the fake worker take effect where the real server checks for
// them: before each node and at each progress step. A node that does not
// check runs to its end; the prompt then stops at the next node, which
// execution_interrupted names (after its `executing`), or succeeds when no
// node was left to run.
import { afterEach, describe, expect, it } from 'vitest';
import { defineNode, type LocalNode } from '../engine/local/define-node.ts';
import type { Workflow } from '../engine/types.ts';
import { type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import { type FakeWorkerClient, fakeWorkerClient } from './helpers/fake-worker-client.ts';

let w: FakeWorker | undefined;
let c: FakeWorkerClient | undefined;
afterEach(async () => {
  c?.close();
  await w?.close();
  w = undefined;
});

/** A node that never checks for an interrupt: it returns its value once the test opens it. */
function gate(name: string, output_node: boolean): { node: LocalNode; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const node = defineNode({
    name,
    category: 'test',
    required: { value: ['INT', {}] },
    outputs: output_node ? [] : [{ type: 'INT' }],
    output_node,
    async run({ value }) {
      await opened;
      return output_node ? { outputs: [], ui: { text: [String(value)] } } : { outputs: [value] };
    },
  });
  return { node, open };
}

async function start(nodes: LocalNode[]) {
  w = await startFakeWorker({ nodes });
  c = fakeWorkerClient(w);
  return { w, c, ...(await c.connect()) };
}

describe('interrupts', () => {
  it('take effect before the next node: execution_interrupted names it, after its executing', async () => {
    const g = gate('Gate', false);
    const { w, c, id, r } = await start([g.node]);
    const prompt: Workflow = {
      n: { class_type: 'Number', inputs: { value: 3 } },
      g: { class_type: 'Gate', inputs: { value: ['n', 0] } },
      s: { class_type: 'Show', inputs: { value: ['g', 0] } },
    };
    const p = await c.submit(prompt, id);
    await r.waitFor((f) => f.type === 'executing' && f.data?.node === 'g');
    expect((await c.post('/interrupt', { prompt_id: p.prompt_id })).status).toBe(200);
    g.open();
    await c.ended(r, p.prompt_id);

    const seq = r.ofPrompt(p.prompt_id).flatMap((f) => (f.type === 'progress_state' ? [] : [`${f.type}:${f.data!.node ?? f.data!.node_id ?? ''}`]));
    expect(seq.slice(-3)).toEqual(['executing:s', 'execution_interrupted:s', 'executing:']);
    expect(r.ofPrompt(p.prompt_id).find((f) => f.type === 'execution_interrupted')!.data).toEqual({
      prompt_id: p.prompt_id,
      node_id: 's',
      node_type: 'Show',
      executed: ['n', 'g'],
      timestamp: expect.any(Number),
    });
    expect(w.runs.Show).toBeUndefined();
    expect(w.queue.history.get(p.prompt_id)!.status).toMatchObject({ status_str: 'error', completed: false });
  });

  it('an interrupt while the last node runs, which does not check, changes nothing: the prompt succeeds', async () => {
    const g = gate('GateShow', true);
    const { w, c, id, r } = await start([g.node]);
    const p = await c.submit({ n: { class_type: 'Number', inputs: { value: 4 } }, g: { class_type: 'GateShow', inputs: { value: ['n', 0] } } }, id);
    await r.waitFor((f) => f.type === 'executing' && f.data?.node === 'g');
    await c.post('/interrupt', {});
    g.open();
    await c.ended(r, p.prompt_id);
    expect(w.queue.history.get(p.prompt_id)!.status).toMatchObject({ status_str: 'success', completed: true });
    expect(w.queue.history.get(p.prompt_id)!.outputs).toEqual({ g: { text: ['4'] } });
  });

  it('a node that checks (a progress step, a wait) stops at once and is the one named', async () => {
    const { c, id, r } = await start([]);
    const p = await c.submit(
      {
        n: { class_type: 'Number', inputs: { value: 1 } },
        wt: { class_type: 'Wait', inputs: { value: ['n', 0], ms: 60_000, steps: 1 } },
        s: { class_type: 'Show', inputs: { value: ['wt', 0] } },
      },
      id,
    );
    await r.waitFor((f) => f.type === 'executing' && f.data?.node === 'wt');
    await c.post('/interrupt', {});
    await c.ended(r, p.prompt_id);
    expect(r.ofPrompt(p.prompt_id).find((f) => f.type === 'execution_interrupted')!.data).toMatchObject({
      node_id: 'wt',
      node_type: 'Wait',
      executed: ['n'],
    });
  });
});
