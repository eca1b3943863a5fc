// The job hub of an instance whose storage has an event bus: the in-process
// hub, plus the same events to and from the other instances on the storage.
// Whatever is published here also goes on the bus (always: who listens
// elsewhere is not knowable from here); what other instances publish is
// delivered to this instance's listeners of that job or account, as if it
// had happened here. A job or account is subscribed on the bus while it has
// a listener here. Status events still carry nothing: listeners re-read the
// row, which stays the source of truth.
//
// Cost per event: one queue entry, serialised once per batch (bus-outbox.ts).
// Progress comes already throttled by the runner; engine previews, which the
// in-process channel carries unthrottled, go on the bus at most once per
// progress interval per job (the newest one), since each is an image that
// may travel by reference through the database.
import type { EventBus } from '../../storage/types.ts';
import { errorText } from '../log.ts';
import type { Logger } from '../types.ts';
import { accountChannel, decodeBatch, jobChannel, toAccountEvent, toJobEvent, wireAccountEvent } from './bus-codec.ts';
import { createOutbox, type Outbox } from './bus-outbox.ts';
import type { AccountEvent, JobHub, OnLive } from './hub.ts';
import { createThrottle, type Throttle } from './throttle.ts';

export interface BusHubOptions {
  logger: Logger;
  /** Least interval between two engine previews of a job on the bus. */
  progressIntervalMs: number;
  /** How long a new subscriber waits for the bus to listen before it is told to go ahead without (the row poll covers). */
  liveWaitMs?: number;
}

export interface BusHub extends JobHub {
  flush(): Promise<void>;
  /** The outbox's counts, for benchmarks and diagnostics. */
  outbox: Outbox;
}

interface Remote {
  /** The one bus subscription that carries the channel's messages here (each parsed once). */
  stop: () => void;
  count: number;
}

const LIVE_WAIT_MS = 3000;
const NOTHING = () => {};

export function createBusHub(local: JobHub, bus: EventBus, opts: BusHubOptions): BusHub {
  const { logger } = opts;
  const liveWaitMs = opts.liveWaitMs ?? LIVE_WAIT_MS;
  const remotes = new Map<string, Remote>();
  /** Jobs whose previews came over the bus: what the local hub keeps of them goes with the last listener. */
  const remotePreviews = new Set<string>();
  const previewThrottles = new Map<string, Throttle<AccountEvent>>();
  let failing = false;
  const outbox = createOutbox(
    (channel, payload) => bus.publish(channel, payload),
    (err, channel) => {
      // Once per outage, not once per event.
      if (err !== null && !failing) logger.warn('job events are not reaching other instances', { channel, error: errorText(err) });
      else if (err === null && failing) logger.info('job events reach other instances again');
      failing = err !== null;
    },
  );
  bus.onError?.((err) => logger.warn('event bus connection lost; reconnecting', { error: errorText(err) }));

  function tell(onLive: OnLive | undefined) {
    try {
      onLive?.();
    } catch (err) {
      logger.error('job event listener failed', { error: errorText(err) });
    }
  }

  /**
   * Subscribes `channel` on the bus while it has a subscriber here: one
   * subscription carries the messages, and each subscriber holds one of its
   * own (its listener does nothing) for its onLive, so it is told when the
   * bus hears the channel, for it: a channel heard before the connection
   * dropped is not heard for a subscriber that comes before it is back.
   */
  function attach(channel: string, receive: (payload: string) => void, onLive: OnLive | undefined, onLast?: () => void): () => void {
    let remote = remotes.get(channel);
    if (!remote) {
      remote = { stop: subscribeOrLog(channel, receive), count: 0 };
      remotes.set(channel, remote);
    }
    remote.count++;
    let told = false;
    const timer = setTimeout(() => {
      if (!told) tell(onLive);
      told = true;
    }, liveWaitMs);
    (timer as { unref?: () => void }).unref?.();
    const stopLive = subscribeOrLog(channel, NOTHING, () => {
      clearTimeout(timer);
      told = true;
      tell(onLive);
    });
    const own = remote;
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      clearTimeout(timer);
      stopLive();
      if (--own.count > 0 || remotes.get(channel) !== own) return;
      remotes.delete(channel);
      own.stop();
      onLast?.();
    };
  }

  function subscribeOrLog(channel: string, listener: (payload: string) => void, onLive?: OnLive): () => void {
    try {
      return bus.subscribe(channel, listener, onLive);
    } catch (err) {
      // A closed bus (the service is closing): the subscriber goes ahead without it, the row poll covers.
      logger.error('event bus subscription failed', { channel, error: errorText(err) });
      if (onLive) queueMicrotask(() => tell(onLive));
      return () => {};
    }
  }

  function receiveJob(jobId: string, payload: string) {
    for (const x of decodeBatch(payload)) {
      const event = toJobEvent(x);
      if (!event) continue;
      if (event.type === 'preview') remotePreviews.add(jobId);
      local.publish(jobId, event);
    }
  }

  function receiveAccount(accountId: string, payload: string) {
    for (const x of decodeBatch(payload)) {
      const event = toAccountEvent(x);
      if (event) local.publishAccount(accountId, event);
    }
  }

  function stopPreviews(jobId: string) {
    previewThrottles.get(jobId)?.cancel();
    previewThrottles.delete(jobId);
  }

  function sendPreview(accountId: string, event: AccountEvent & { type: 'engine' }) {
    let throttle = previewThrottles.get(event.job_id);
    if (!throttle) {
      const key = `v:${event.job_id}`;
      throttle = createThrottle<AccountEvent>((e) => outbox.push(accountChannel(accountId), wireAccountEvent(e), key), {
        intervalMs: opts.progressIntervalMs,
      });
      previewThrottles.set(event.job_id, throttle);
    }
    throttle.push(event);
  }

  return {
    subscribe(jobId, listener, onLive) {
      const off = local.subscribe(jobId, listener);
      const detach = attach(
        jobChannel(jobId),
        (payload) => receiveJob(jobId, payload),
        onLive,
        () => remotePreviews.delete(jobId) && local.forget(jobId),
      );
      return () => {
        off();
        detach();
      };
    },
    publish(jobId, event) {
      local.publish(jobId, event);
      outbox.push(jobChannel(jobId), event, event.type === 'progress' ? 'p' : event.type === 'preview' ? 'v' : undefined);
    },
    latestPreview: (jobId) => local.latestPreview(jobId),
    // What comes over the bus is handed on through the local hub, so its count has it.
    delivered: () => local.delivered(),
    forget: (jobId) => local.forget(jobId),
    subscribeAccount(accountId, listener, onLive) {
      const off = local.subscribeAccount(accountId, listener);
      const detach = attach(accountChannel(accountId), (payload) => receiveAccount(accountId, payload), onLive);
      return () => {
        off();
        detach();
      };
    },
    publishAccount(accountId, event) {
      local.publishAccount(accountId, event);
      if (event.type === 'engine' && event.event.type === 'preview') return sendPreview(accountId, event);
      const key = event.type === 'engine' && event.event.type === 'progress' ? `p:${event.job_id}:${event.event.node_id}` : undefined;
      outbox.push(accountChannel(accountId), wireAccountEvent(event), key);
    },
    // Listeners on other instances cannot be counted from here.
    hasAccountListeners: () => true,
    announce(job, status, error, row) {
      // The row goes to this instance's streams only: the bus carries no rows, so the others read it.
      local.announce(job, status, error, row);
      // A preview still held back must not arrive after the status that ends or restarts the run.
      stopPreviews(job.id);
      outbox.push(jobChannel(job.id), { type: 'status' });
      outbox.push(accountChannel(job.account_id), { type: 'lifecycle', job_id: job.id, status, error: error ?? null });
    },
    flush: () => outbox.flush(),
    outbox,
  };
}
