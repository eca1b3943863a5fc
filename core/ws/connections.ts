// The `/ws` peers of this instance, grouped by account. An account with peers
// has one subscription to its live channel and one translator; every message
// is encoded once and sent to all of its peers (the contract: all connections
// of one user receive the same messages). Messages leave in the order of their
// causes, a `status` recount included. A peer that stops reading is closed
// once its unsent bytes pass the cap, instead of growing server memory.
import type { ServiceContext } from '../context.ts';
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
}

interface Channel {
  accountId: string;
  peers: Map<string, PeerEntry>;
  translator: MessageTranslator;
  unsubscribe: () => void;
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
  /** Registers an opened peer of an account (subscribing the account's channel if it is the first). */
  add(peer: WsPeer, accountId: string): void;
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
        for (const entry of ch.peers.values()) send(entry, text);
        return;
      }
      case 'binary':
        for (const entry of ch.peers.values()) send(entry, message.frame);
        return;
      case 'preview': {
        // Each form encoded at most once, whatever the number of peers.
        let withMeta: Uint8Array | undefined;
        let plain: Uint8Array | undefined;
        for (const entry of ch.peers.values()) {
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
    for (const entry of ch.peers.values()) send(entry, text);
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
      tasks: [],
      draining: false,
      recount: () => recount(ch),
    };
    ch.unsubscribe = ctx.jobs.hub.subscribeAccount(accountId, (event) => {
      for (const message of ch.translator.translate(event)) {
        if (message.kind === 'queue') {
          if (ch.tasks.at(-1) !== ch.recount) schedule(ch, ch.recount);
        } else {
          schedule(ch, () => broadcast(ch, message));
        }
      }
    });
    channels.set(accountId, ch);
    return ch;
  }

  function remove(peer: WsPeer): void {
    const entry = peers.get(peer.id);
    if (!entry) return;
    peers.delete(peer.id);
    const ch = channels.get(entry.accountId);
    if (!ch) return;
    ch.peers.delete(peer.id);
    if (ch.peers.size === 0) {
      ch.unsubscribe();
      channels.delete(entry.accountId);
    }
  }

  return {
    add(peer, accountId) {
      const entry: PeerEntry = { peer, accountId, previewMetadata: false };
      peers.set(peer.id, entry);
      (channels.get(accountId) ?? open(accountId)).peers.set(peer.id, entry);
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
