// What this instance sends on the event bus, per channel: at most one
// publish under way per channel, so a channel's messages arrive in order,
// and whatever is queued meanwhile leaves together as the next batch (one
// NOTIFY for a burst of events). A snapshot (progress, a preview) queued
// while an older one of the same key still waits replaces it, as the hub's
// consumers throttle them anyway: a bus that falls behind sends fewer of
// them, never an older one after a newer one, and never fewer of the rest.
import { encodeBatch } from './bus-codec.ts';

export interface OutboxStats {
  /** Events queued, events replaced by a newer snapshot while waiting, events dropped past the bound. */
  events: number;
  coalesced: number;
  dropped: number;
  /** Bus messages (batches) sent, and those that failed. */
  batches: number;
  failed: number;
}

export interface Outbox {
  /** Queues `event` for `channel`; one of the same `key` still waiting there is dropped. */
  push(channel: string, event: unknown, key?: string): void;
  /** Resolves once everything queued has been sent (or failed). */
  flush(): Promise<void>;
  stats(): OutboxStats;
}

interface Queue {
  items: Array<{ event: unknown; key: string | undefined }>;
}

/** Events one channel may have waiting while the bus does not answer; the oldest go first past it. */
const MAX_WAITING = 10_000;

export function createOutbox(
  publish: (channel: string, payload: string) => Promise<void>,
  onResult: (err: unknown, channel: string) => void,
): Outbox {
  const queues = new Map<string, Queue>();
  const sending = new Set<Promise<void>>();
  const stats: OutboxStats = { events: 0, coalesced: 0, dropped: 0, batches: 0, failed: 0 };

  async function send(channel: string, q: Queue) {
    // Whatever the current task queues joins the first batch.
    await Promise.resolve();
    while (q.items.length > 0) {
      const batch = q.items.splice(0);
      stats.batches++;
      try {
        await publish(channel, encodeBatch(batch.map((i) => i.event)));
        onResult(null, channel);
      } catch (err) {
        stats.failed++;
        onResult(err, channel);
      }
    }
    queues.delete(channel);
  }

  return {
    push(channel, event, key) {
      stats.events++;
      let q = queues.get(channel);
      if (!q) {
        const created: Queue = (q = { items: [] });
        queues.set(channel, created);
        const p = send(channel, created).finally(() => sending.delete(p));
        sending.add(p);
      }
      if (key !== undefined) {
        const older = q.items.findIndex((i) => i.key === key);
        if (older >= 0) {
          q.items.splice(older, 1);
          stats.coalesced++;
        }
      }
      if (q.items.length >= MAX_WAITING) {
        q.items.shift();
        stats.dropped++;
      }
      q.items.push({ event, key });
    },
    async flush() {
      while (sending.size > 0) await Promise.all([...sending]);
    },
    stats: () => ({ ...stats }),
  };
}
