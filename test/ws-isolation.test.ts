// `/ws` tenancy and memory through a real Node server and real `ws` clients:
// two accounts never see each other's events, and a client that stops
// reading is closed (1008) once its unsent bytes pass the cap while the
// account's other clients keep receiving everything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitOk } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { connectWs, type Frame } from './helpers/ws-client.ts';
import { ALICE, BOB, startWsHarness, type WsHarness } from './helpers/ws-harness.ts';

const CAP = 2 * 1024 * 1024;
let h: WsHarness;
beforeAll(async () => {
  h = await startWsHarness({ maxWebSocketBufferedBytes: CAP });
});
afterAll(() => h.close());

const ended = (id: string) => (f: Frame) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === id && f.data.node === null;
/** Everything a client received, as text, binary frames decoded loosely: to search for ids. */
const everything = (frames: Frame[]) =>
  frames.map((f) => (f.kind === 'text' ? JSON.stringify(f) : new TextDecoder().decode(f.bytes.subarray(0, 4096)))).join('\n');

describe('ws isolation', () => {
  it('two accounts never see each other’s events', async () => {
    const a = await connectWs(h.base, { token: ALICE.key });
    const b = await connectWs(h.base, { token: BOB.key });
    const preview = (color: number) => ({
      e: { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color } },
      p: { class_type: 'PreviewImage', inputs: { images: ['e', 0] } },
      t: { class_type: 'Say', inputs: { text: `secret-${color}` } },
    });
    a.send({ type: 'feature_flags', data: { supports_preview_metadata: true } });
    b.send({ type: 'feature_flags', data: { supports_preview_metadata: true } });
    const aliceJob = await submitOk(h.as(ALICE.key), preview(0x111111));
    const bobJob = await submitOk(h.as(BOB.key), preview(0x222222));
    await a.waitFor('alice job end', ended(aliceJob.id));
    await b.waitFor('bob job end', ended(bobJob.id));
    // A later job of each, so anything misrouted from the first ones has arrived by then.
    const lateA = await submitOk(h.as(ALICE.key), waitWorkflow(5, 1, 1));
    const lateB = await submitOk(h.as(BOB.key), waitWorkflow(6, 1, 1));
    await a.waitFor('late alice', ended(lateA.id));
    await b.waitFor('late bob', ended(lateB.id));

    const seenA = everything(a.frames);
    const seenB = everything(b.frames);
    expect(seenA).toContain(aliceJob.id);
    expect(seenA).toContain('secret-1118481');
    expect(seenB).toContain(bobJob.id);
    expect(seenA).not.toContain(bobJob.id);
    expect(seenA).not.toContain(lateB.id);
    expect(seenA).not.toContain('secret-2236962');
    expect(seenB).not.toContain(aliceJob.id);
    expect(seenB).not.toContain(lateA.id);
    expect(seenB).not.toContain('secret-1118481');
    // Binary frames too: one preview and one text frame each, their own.
    expect(
      a
        .binaries()
        .map((f) => f.type)
        .sort(),
    ).toEqual([3, 4]);
    expect(
      b
        .binaries()
        .map((f) => f.type)
        .sort(),
    ).toEqual([3, 4]);
    await a.close();
    await b.close();
  });

  it('a client that stops reading is closed with 1008; the account’s other client gets every frame', async () => {
    const reader = await connectWs(h.base, { token: ALICE.key });
    const slow = await connectWs(h.base, { token: ALICE.key });
    const other = await connectWs(h.base, { token: BOB.key });
    // The client's socket stops reading: the server's unsent bytes for it can only grow.
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();

    // 16 MiB in all: beyond the cap plus what the kernel's socket buffers hold (about 4 MiB on loopback here).
    // Small frames against a cap of several: a reading client never comes near it.
    const COUNT = 64;
    const SIZE = 256 * 1024;
    // The reader is never more than LAG previews (1 MiB, half the cap) behind, however slow the machine.
    const LAG = 4;
    h.floodPace.before = async (i) => {
      if (i >= LAG) await reader.waitFor(`preview ${i - LAG}`, (f) => f.kind === 'binary' && f.bytes[8] === (i - LAG) % 256, 20_000);
    };
    const job = await submitOk(h.as(ALICE.key), { f: { class_type: 'Flood', inputs: { count: COUNT, size: SIZE } } });
    await reader.waitFor('flood end', ended(job.id), 20_000);
    const previews = reader.binaries();
    expect(previews).toHaveLength(COUNT);
    previews.forEach((p, i) => {
      expect(p.bytes.byteLength).toBe(8 + SIZE);
      expect(p.bytes[8]).toBe(i % 256);
    });

    socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1008);
    // It had been dropped well before the end: it got a fraction of the previews.
    expect(slow.binaries().length).toBeLessThan(COUNT);
    // Bob's client saw none of it and is still open.
    expect(other.binaries()).toHaveLength(0);
    expect(other.ws.readyState).toBe(other.ws.OPEN);

    // The reader stays subscribed: a later job still reaches it.
    const next = await submitOk(h.as(ALICE.key), waitWorkflow(9, 1, 1));
    await reader.waitFor('next job', ended(next.id));
    await reader.close();
    await other.close();
  });
});
