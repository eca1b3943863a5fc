// The `/ws` peers of this instance, grouped by account. An account with peers
// has one subscription to its live channel and one translator; every message
// is encoded once and sent to all of its peers (the contract: all connections
// of one user receive the same messages). Messages leave in the order of their
// causes, a `status` recount included. A peer that stops reading is closed
// once its unsent bytes pass the cap, instead of growing server memory.
// A peer is greeted (and hears anything) only once the hub hears its account:
// at once in process; on a storage with an event bus, once the bus listens.
// After a gap in the bus, the channel re-reads what the lost events would
// have said: the queue count, and the end of the runs it follows.
import type { ServiceContext } from '../context.ts';
import type { AccountEvent } from '../jobs/hub.ts';
import { isTerminal, type JobStatus } from '../jobs/state-machine.ts';
import { errorText } from '../log.ts';
import type { WsPeer } from '../types.ts';
import { jsonFrame, previewImageFrame, previewWithMetadataFrame } from './frames.ts';
import { createMessageTranslator, type MessageTranslator, type Outgoing } from './messages.ts';

/** Close code for a peer dropped for not reading (policy violation). */
export const SLOW_PEER_CLOSE_CODE = 1008;
export const DEFAULT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Statuses that count in `queue_remaining` (the reference: pending + running). */
const IN_QUEUE = ['queued', 'running', 'canceling'];

export const queueRemaining = (ctx: ServiceContext, accountId: string) => ctx.metadata.countJobs(IN_QUEUE, accountId);

export const statusFrame = (queue_remaining: number, sid?: string) =>
  jsonFrame('status', sid === undefined ? { status: { exec_info: { queue_remaining } } } : { status: { exec_info: { queue_remaining } }, sid });

interface PeerEntry {
  peer: WsPeer;
  accountId: string;
  previewMetadata: boolean;
  /** Greeted and hearing the channel: a peer waits while its channel's subscription is not live yet. */
  joined: boolean;
}

interface Channel {
  accountId: string;
  peers: Map<string, PeerEntry>;
  translator: MessageTranslator;
  unsubscribe: () => void;
  /** The hub hears the account (its first onLive came); `unblock` lets waiting tasks go (also when the channel closes first). */
  live: boolean;
  unblock: () => void;
  /** Work in order; a task may be async (a recount), and what follows waits for it. */
  tasks: Array<() => void | Promise<void>>;
  draining: boolean;
  /**
   * The channel's one recount task. Queue changes back to back (a burst of
   * submissions) share it while it waits last in the queue; one after any
   * other message gets its own, so a `status` never moves past the frames
   * it was announced between.
   */
  recount: () => Promise<void>;
}

export interface Connections {
  /**
   * Registers an opened peer of an account (subscribing the account's
   * channel if it is the first); `greeting` is its first frame, sent once
   * the channel is live and before anything the channel carries.
   */
  add(peer: WsPeer, accountId: string, greeting?: string): void;
  /** Forgets a peer (unsubscribing the channel after the account's last one). */
  remove(peer: WsPeer): void;
  /** The peer's `supports_preview_metadata` flag. */
  setPreviewMetadata(peer: WsPeer, on: boolean): void;
  /** Peers registered, and accounts subscribed. */
  stats(): { peers: number; accounts: number; jobs: number };
}

export function createConnections(ctx: ServiceContext, opts: { maxBufferedBytes?: number } = {}): Connections {
  const maxBuffered = opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const channels = new Map<string, Channel>();
  const peers = new Map<string, PeerEntry>();

  function drop(entry: PeerEntry): void {
    remove(entry.peer);
    ctx.logger.warn('websocket peer dropped: it stopped reading', { peer: entry.peer.id, account_id: entry.accountId });
    entry.peer.close(SLOW_PEER_CLOSE_CODE, 'Too many unread messages');
  }

  function send(entry: PeerEntry, data: string | Uint8Array): void {
    entry.peer.send(data);
    const buffered = entry.peer.bufferedAmount?.() ?? 0;
    if (buffered > maxBuffered) drop(entry);
  }

  function broadcast(ch: Channel, message: Outgoing): void {
    switch (message.kind) {
      case 'json': {
        const text = jsonFrame(message.type, message.data);
        for (const entry of ch.peers.values()) if (entry.joined) send(entry, text);
        return;
      }
      case 'binary':
        for (const entry of ch.peers.values()) if (entry.joined) send(entry, message.frame);
        return;
      case 'preview': {
        // Each form encoded at most once, whatever the number of peers.
        let withMeta: Uint8Array | undefined;
        let plain: Uint8Array | undefined;
        for (const entry of ch.peers.values()) {
          if (!entry.joined) continue;
          const frame = entry.previewMetadata
            ? (withMeta ??= previewWithMetadataFrame(message.meta, message.format, message.bytes))
            : (plain ??= previewImageFrame(message.format, message.bytes));
          send(entry, frame);
        }
        return;
      }
      case 'queue':
        return;
    }
  }

  async function recount(ch: Channel): Promise<void> {
    const count = await queueRemaining(ctx, ch.accountId);
    const text = statusFrame(count);
    for (const entry of ch.peers.values()) if (entry.joined) send(entry, text);
  }

  /** After a gap: runs that ended meanwhile end here too (read from their rows), then the queue is counted again. */
  async function resync(ch: Channel): Promise<void> {
    for (const jobId of ch.translator.jobIds()) {
      const row = await ctx.metadata.getJobById(jobId);
      if (!row || !isTerminal(row.status as JobStatus)) continue;
      const event = { type: 'lifecycle', job_id: jobId, status: row.status, error: row.error } as const;
      for (const message of ch.translator.translate(event)) if (message.kind !== 'queue') broadcast(ch, message);
    }
    await recount(ch);
  }

  function schedule(ch: Channel, task: () => void | Promise<void>): void {
    ch.tasks.push(task);
    if (!ch.draining) void drain(ch);
  }

  // Synchronous tasks run at once (no await unless a task returned a promise): no added latency.
  async function drain(ch: Channel): Promise<void> {
    ch.draining = true;
    while (ch.tasks.length > 0) {
      const task = ch.tasks.shift()!;
      try {
        const pending = task();
        if (pending) await pending;
      } catch (err) {
        ctx.logger.error('websocket fan-out failed', { account_id: ch.accountId, error: errorText(err) });
      }
    }
    ch.draining = false;
  }

  function open(accountId: string): Channel {
    const ch: Channel = {
      accountId,
      peers: new Map(),
      translator: createMessageTranslator(ctx.now),
      unsubscribe: () => {},
      live: false,
      unblock: () => {},
      tasks: [],
      draining: false,
      recount: () => recount(ch),
    };
    const untilLive = new Promise<void>((resolve) => {
      ch.unblock = resolve;
    });
    const listener = (event: AccountEvent) => {
      for (const message of ch.translator.translate(event)) {
        if (message.kind === 'queue') {
          if (ch.tasks.at(-1) !== ch.recount) schedule(ch, ch.recount);
        } else {
          schedule(ch, () => broadcast(ch, message));
        }
      }
    };
    ch.unsubscribe = ctx.jobs.hub.subscribeAccount(accountId, listener, () => {
      if (ch.live) return schedule(ch, () => resync(ch));
      ch.live = true;
      ch.unblock();
    });
    // Not live yet (a bus): what comes for the channel, greetings included, waits for it.
    if (!ch.live) schedule(ch, () => untilLive);
    channels.set(accountId, ch);
    return ch;
  }

  function remove(peer: WsPeer): void {
    const entry = peers.get(peer.id);
    if (!entry) return;
    peers.delete(peer.id);
    ctx.metrics.websockets.dec();
    const ch = channels.get(entry.accountId);
    if (!ch) return;
    ch.peers.delete(peer.id);
    if (ch.peers.size === 0) {
      ch.unsubscribe();
      ch.unblock();
      channels.delete(entry.accountId);
    }
  }

  return {
    add(peer, accountId, greeting) {
      const entry: PeerEntry = { peer, accountId, previewMetadata: false, joined: false };
      if (!peers.has(peer.id)) ctx.metrics.websockets.inc();
      peers.set(peer.id, entry);
      const ch = channels.get(accountId) ?? open(accountId);
      ch.peers.set(peer.id, entry);
      const join = () => {
        if (peers.get(peer.id) !== entry) return;
        if (greeting !== undefined) send(entry, greeting);
        entry.joined = true;
      };
      if (ch.live) join();
      else schedule(ch, join);
    },
    remove,
    setPreviewMetadata(peer, on) {
      const entry = peers.get(peer.id);
      if (entry) entry.previewMetadata = on;
    },
    stats() {
      let jobs = 0;
      for (const ch of channels.values()) jobs += ch.translator.jobCount;
      return { peers: peers.size, accounts: channels.size, jobs };
    },
  };
}
