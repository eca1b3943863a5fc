// A worker another client uses too: the real server sends progress text
// (binary type 3, which names no prompt) to every socket, so the engine gets
// the other client's text as well. None of it may reach a job of ours; the
// job's own text does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineNode } from '../engine/local/define-node.ts';
import { connectRecorder, type WsRecorder } from './fakes/ws-recorder.ts';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';
import { connectWs, type WsClient } from './helpers/ws-client.ts';

let open!: () => void;
const opened = new Promise<void>((r) => (open = r));
/** An output node that returns once the test opens it, holding the worker's queue meanwhile. */
const gate = defineNode({
  name: 'GateShow',
  category: 'test',
  output_node: true,
  required: { value: ['INT', {}] },
  async run({ value }) {
    await opened;
    return { outputs: [], ui: { text: [String(value)] } };
  },
});

let s: WorkerService;
let c: WsClient;
let other: WsRecorder;
beforeAll(async () => {
  s = await startWorkerService({ workers: [{ nodes: [gate] }] });
  c = await connectWs(s.base, { clientId: 'shared' });
  other = await connectRecorder(s.workers[0].wsUrl, 'someone-else');
});
afterAll(async () => {
  other.close();
  await c.close();
  await s.close();
});

const texts = (c: WsClient) =>
  c.binaries().flatMap((b) => {
    if (b.type !== 3) return [];
    const n = new DataView(b.bytes.buffer, b.bytes.byteOffset).getUint32(4);
    return [Buffer.from(b.bytes.subarray(8 + n)).toString()];
  });

describe('a worker shared with another client', () => {
  it("the other client's progress text reaches no job of ours", async () => {
    const w = s.workers[0];
    const theirs = await fetch(`${w.url}/prompt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: 'someone-else',
        prompt: {
          n: { class_type: 'Number', inputs: { value: 1 } },
          g: { class_type: 'GateShow', inputs: { value: ['n', 0] } },
          t: { class_type: 'FakeProgressText', inputs: { text: 'theirs-1\ntheirs-2' } },
        },
      }),
    });
    expect(theirs.status).toBe(200);
    await other.waitFor((f) => f.type === 'executing' && f.data?.node === 'g');
    // Ours waits behind theirs in the worker's queue while their text goes out.
    const job = await submitOk(s, { t: { class_type: 'FakeProgressText', inputs: { text: 'ours' } } });
    // The worker's status broadcast says ours is queued behind theirs.
    await other.waitFor((f) => f.type === 'status' && (f.data as any).status.exec_info.queue_remaining === 2);
    open();
    await waitForJob(s, job.id, 'succeeded');
    await other.waitFor((f) => f.type === 'binary:3' && Buffer.from(f.bytes!).toString().endsWith('ours'));
    // The engine's socket had all three (type, node id length, node id `t`, text); only ours went to the job.
    const toEngine = w.sent.filter((f) => f.sid === s.clientIdOn(w) && f.type === 'binary:3');
    expect(toEngine.map((f) => Buffer.from(f.bytes!.subarray(9)).toString())).toEqual(['theirs-1', 'theirs-2', 'ours']);
    await c.waitFor('our text', (f) => f.kind === 'binary' && f.type === 3);
    expect(texts(c)).toEqual(['ours']);
  });
});
