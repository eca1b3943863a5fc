// The core's side of the event bus, without a database: the outbox
// (core/jobs/bus-outbox.ts) batches a channel's events while its publish is
// under way and lets a newer snapshot replace a waiting one, never
// reordering or dropping the rest; the codec (core/jobs/bus-codec.ts) carries
// the hub's events, preview bytes included, and skips what it does not know.
// The publisher here answers only when the test says, so every step is an
// event the test caused.
import { describe, expect, it } from 'vitest';
import { accountChannel, decodeBatch, encodeBatch, jobChannel, toAccountEvent, toJobEvent, wireAccountEvent } from '../core/jobs/bus-codec.ts';
import { createOutbox } from '../core/jobs/bus-outbox.ts';
import type { AccountEvent } from '../core/jobs/hub.ts';

/** A publisher whose calls wait for the test: `sent` in call order, `answer(i)` settles call i. */
function heldPublisher() {
  const sent: Array<{ channel: string; events: unknown[] }> = [];
  const answers: Array<(err?: Error) => void> = [];
  const waiters = new Set<() => void>();
  const publish = (channel: string, payload: string) =>
    new Promise<void>((resolve, reject) => {
      sent.push({ channel, events: decodeBatch(payload) });
      answers.push((err) => (err ? reject(err) : resolve()));
      for (const w of [...waiters]) w();
    });
  const calls = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (sent.length < n) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { publish, sent, calls, answer: (i: number, err?: Error) => answers[i](err) };
}

describe('bus outbox', () => {
  it('sends what one task queued as one batch, in order', async () => {
    const p = heldPublisher();
    const outbox = createOutbox(p.publish, () => {});
    outbox.push('job:1', { type: 'status' });
    outbox.push('job:1', { type: 'progress', n: 1 }, 'p');
    outbox.push('job:1', { type: 'output', n: 2 });
    await p.calls(1);
    expect(p.sent).toEqual([{ channel: 'job:1', events: [{ type: 'status' }, { type: 'progress', n: 1 }, { type: 'output', n: 2 }] }]);
    p.answer(0);
    await outbox.flush();
    expect(outbox.stats()).toMatchObject({ events: 3, batches: 1, coalesced: 0 });
  });

  it('while a publish is under way: queues the next batch, a newer snapshot replacing a waiting one (sent after the rest), nothing else dropped', async () => {
    const p = heldPublisher();
    const outbox = createOutbox(p.publish, () => {});
    outbox.push('account:a', { n: 0 });
    await p.calls(1);
    outbox.push('account:a', { progress: 1 }, 'p:j:n');
    outbox.push('account:a', { executing: 'n2' });
    outbox.push('account:a', { progress: 2 }, 'p:j:n');
    outbox.push('account:a', { progress: 'other node' }, 'p:j:m');
    // Another channel does not wait for this one.
    outbox.push('job:j', { type: 'status' });
    await p.calls(2);
    expect(p.sent[1]).toEqual({ channel: 'job:j', events: [{ type: 'status' }] });
    p.answer(0);
    await p.calls(3);
    expect(p.sent[2]).toEqual({ channel: 'account:a', events: [{ executing: 'n2' }, { progress: 2 }, { progress: 'other node' }] });
    p.answer(1);
    p.answer(2);
    await outbox.flush();
    expect(outbox.stats()).toMatchObject({ events: 6, coalesced: 1, batches: 3, failed: 0 });
  });

  it('reports a failed publish and goes on with the next batch', async () => {
    const p = heldPublisher();
    const results: Array<string | null> = [];
    const outbox = createOutbox(p.publish, (err) => results.push(err === null ? null : String(err)));
    outbox.push('job:f', { n: 1 });
    await p.calls(1);
    outbox.push('job:f', { n: 2 });
    p.answer(0, new Error('connection refused'));
    await p.calls(2);
    p.answer(1);
    await outbox.flush();
    expect(results).toEqual(['Error: connection refused', null]);
    expect(p.sent.map((s) => s.events)).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    expect(outbox.stats()).toMatchObject({ batches: 2, failed: 1 });
  });
});

describe('bus codec', () => {
  it("carries the hub's events both ways, an engine preview's bytes as base64", () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
    const account: AccountEvent[] = [
      { type: 'engine', job_id: 'j', event: { type: 'preview', node_id: 'n', format: 'png', bytes } },
      { type: 'engine', job_id: 'j', event: { type: 'executed', node_id: 'n', output: { seed: [2n ** 64n - 1n] } } },
      { type: 'lifecycle', job_id: 'j', status: 'failed', error: { code: 'node_execution_error' } },
    ];
    const decoded = decodeBatch(encodeBatch(account.map(wireAccountEvent))).map(toAccountEvent);
    expect(decoded).toEqual(account);
    const job = [
      { type: 'status' },
      { type: 'progress', progress: { value: 0.5 } },
      { type: 'preview', preview: { node_id: 'n', content_type: 'image/png', data_base64: 'AAA=' } },
    ];
    expect(decodeBatch(encodeBatch(job)).map(toJobEvent)).toEqual(job);
    expect([jobChannel('j'), accountChannel('a')]).toEqual(['job:j', 'account:a']);
  });

  it('skips what this version does not read: another version, a broken batch, an unknown event', () => {
    expect(decodeBatch('{"v":2,"e":[{"type":"status"}]}')).toEqual([]);
    expect(decodeBatch('not json')).toEqual([]);
    expect(decodeBatch('{"v":1,"e":[{"type":"teleport"},{"type":"status"}]}').map(toJobEvent)).toEqual([null, { type: 'status' }]);
    expect(toAccountEvent({ type: 'engine', job_id: 'j', event: { type: 'preview', node_id: 'n', format: 'gif', bytes: 'AA==' } })).toBeNull();
  });
});
