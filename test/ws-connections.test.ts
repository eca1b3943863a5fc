// The `/ws` fan-out (core/ws/connections.ts) on a real hub and a real
// in-memory job store, with recording peers: one subscription per account
// while it has peers, the same frames to all of them in the order of their
// causes (a queue recount included), each preview form encoded once, and a
// peer over the buffer cap closed and skipped from then on.
import { describe, expect, it } from 'vitest';
import type { ServiceContext } from '../core/context.ts';
import { createJobHub } from '../core/jobs/hub.ts';
import { silentLogger } from '../core/log.ts';
import { createInstanceMetrics } from '../core/ops/instance-metrics.ts';
import type { WsPeer } from '../core/types.ts';
import { createConnections, SLOW_PEER_CLOSE_CODE } from '../core/ws/connections.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';

class RecordingPeer implements WsPeer {
  readonly request = new Request('http://x/ws');
  sent: Array<string | Uint8Array> = [];
  closedWith: number | undefined;
  buffered = 0;
  constructor(readonly id: string) {}
  send(data: string | Uint8Array) {
    this.sent.push(data);
  }
  close(code?: number) {
    this.closedWith = code;
  }
  bufferedAmount() {
    return this.buffered;
  }
  types() {
    return this.sent.map((d) => (typeof d === 'string' ? JSON.parse(d).type : `binary:${new DataView(d.buffer, d.byteOffset).getUint32(0)}`));
  }
}

function setup(maxBufferedBytes = 1000) {
  const hub = createJobHub();
  const ctx = {
    metadata: createMemoryStorage().metadata,
    jobs: { hub },
    logger: silentLogger,
    now: () => 1,
    metrics: createInstanceMetrics(),
  } as unknown as ServiceContext;
  return { hub, connections: createConnections(ctx, { maxBufferedBytes }) };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

/** One peer of account `acc`, over queue counts answered only when the test says (`reads`, oldest first). */
function gatedCounts() {
  const hub = createJobHub();
  const reads: Array<(n: number) => void> = [];
  const metadata = { countJobs: () => new Promise<number>((resolve) => reads.push(resolve)) };
  const ctx = { metadata, jobs: { hub }, logger: silentLogger, now: () => 1, metrics: createInstanceMetrics() } as unknown as ServiceContext;
  const connections = createConnections(ctx, { maxBufferedBytes: 1e9 });
  const peer = new RecordingPeer('p');
  connections.add(peer, 'acc');
  // A macrotask: every promise chain behind an answered read settles.
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  return { hub, reads, peer, flush };
}

describe('ws connections', () => {
  it('subscribes an account once while it has peers, and lets go after the last one', () => {
    const { hub, connections } = setup();
    const [p1, p2] = [new RecordingPeer('1'), new RecordingPeer('2')];
    connections.add(p1, 'acc');
    connections.add(p2, 'acc');
    expect(connections.stats()).toMatchObject({ peers: 2, accounts: 1 });
    expect(hub.hasAccountListeners('acc')).toBe(true);
    connections.remove(p1);
    expect(hub.hasAccountListeners('acc')).toBe(true);
    connections.remove(p2);
    connections.remove(p2); // twice is harmless
    expect(hub.hasAccountListeners('acc')).toBe(false);
    expect(connections.stats()).toEqual({ peers: 0, accounts: 0, jobs: 0 });
  });

  it('sends the same frames to every peer of the account, in order, the recount in its place', async () => {
    const { hub, connections } = setup();
    const [p1, p2, other] = [new RecordingPeer('1'), new RecordingPeer('2'), new RecordingPeer('3')];
    connections.add(p1, 'acc');
    connections.add(p2, 'acc');
    connections.add(other, 'someone-else');
    hub.announce({ id: 'j', account_id: 'acc' }, 'running');
    hub.publishAccount('acc', { type: 'engine', job_id: 'j', event: { type: 'execution_start' } });
    hub.announce({ id: 'j', account_id: 'acc' }, 'succeeded');
    await tick();
    expect(p1.types()).toEqual(['status', 'execution_start', 'execution_success', 'status', 'executing']);
    expect(p2.sent).toEqual(p1.sent);
    expect(other.sent).toEqual([]);
    expect(JSON.parse(p1.sent[0] as string).data).toEqual({ status: { exec_info: { queue_remaining: 0 } } });
    expect(connections.stats().jobs).toBe(0);
  });

  it('a status stays between the frames it was announced between, even behind a recount still reading', async () => {
    // The first recount is still reading when the rest arrives.
    const { hub, reads, peer, flush } = gatedCounts();
    const job = { id: 'j', account_id: 'acc' };
    hub.announce(job, 'queued');
    hub.announce(job, 'running');
    hub.publishAccount('acc', { type: 'engine', job_id: 'j', event: { type: 'execution_start' } });
    hub.announce(job, 'succeeded');
    // Each read answered in turn.
    for (const count of [1, 1, 0]) {
      await flush();
      reads.shift()?.(count);
    }
    await flush();
    expect(reads).toEqual([]);
    // The reference's order: a status for the put and one for the get, and at the end the status before `executing` null.
    expect(peer.types()).toEqual(['status', 'status', 'execution_start', 'execution_success', 'status', 'executing']);
    const counts = peer.sent.flatMap((f) =>
      JSON.parse(f as string).type === 'status' ? [JSON.parse(f as string).data.status.exec_info.queue_remaining] : [],
    );
    expect(counts).toEqual([1, 1, 0]);
  });

  it('queue changes back to back share the recount that waits last', async () => {
    const { hub, reads, peer, flush } = gatedCounts();
    // The first starts reading at once; the nine behind it share one more.
    for (let i = 0; i < 10; i++) hub.announce({ id: `j${i}`, account_id: 'acc' }, 'queued');
    for (const count of [1, 10]) {
      await flush();
      reads.shift()?.(count);
    }
    await flush();
    expect(reads).toEqual([]);
    expect(peer.types()).toEqual(['status', 'status']);
  });

  it('encodes each preview form once: type 4 to flagged peers, type 1 to the others', () => {
    const { hub, connections } = setup(1e9);
    const peers = ['a', 'b', 'c'].map((id) => new RecordingPeer(id));
    for (const p of peers) connections.add(p, 'acc');
    connections.setPreviewMetadata(peers[0], true);
    connections.setPreviewMetadata(peers[1], true);
    hub.publishAccount('acc', { type: 'engine', job_id: 'j', event: { type: 'preview', node_id: 'n', format: 'png', bytes: new Uint8Array([9]) } });
    expect(peers.map((p) => p.types())).toEqual([['binary:4'], ['binary:4'], ['binary:1']]);
    expect(peers[0].sent[0]).toBe(peers[1].sent[0]);
    expect([...(peers[2].sent[0] as Uint8Array)]).toEqual([0, 0, 0, 1, 0, 0, 0, 2, 9]);
  });

  it('closes a peer whose unsent bytes pass the cap (1008) and sends it nothing more', () => {
    const { hub, connections } = setup(1000);
    const [fast, slow] = [new RecordingPeer('fast'), new RecordingPeer('slow')];
    connections.add(fast, 'acc');
    connections.add(slow, 'acc');
    const progress = (value: number) =>
      hub.publishAccount('acc', { type: 'engine', job_id: 'j', event: { type: 'progress', node_id: 'n', value, max: 10 } });
    progress(1);
    slow.buffered = 1001;
    progress(2);
    expect(slow.closedWith).toBe(SLOW_PEER_CLOSE_CODE);
    const sentWhenClosed = slow.sent.length;
    progress(3);
    expect(slow.sent.length).toBe(sentWhenClosed);
    expect(fast.types().filter((t) => t === 'progress')).toHaveLength(3);
    expect(connections.stats().peers).toBe(1);
  });
});
