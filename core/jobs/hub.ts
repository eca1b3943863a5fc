// In-process fan-out of a job's live events to the SSE streams and the
// WebSocket peers of this instance. The job row stays the source of truth;
// the hub only carries what happens between two reads of it, plus the latest
// preview, which no row holds (the contract keeps only the newest one).
// Where instances share a storage with an event bus, bus-hub.ts wraps this
// hub so that the same events reach the other instances' listeners.
import type { EngineEvent } from '../../engine/types.ts';
import type { AssetRecord, JobSummary } from '../../storage/types.ts';

export type HubEvent =
  /** The job's status changed; `row` is the job as that change wrote it, when the writer had it at hand. */
  | { type: 'status'; row?: JobSummary }
  | { type: 'progress'; progress: Record<string, unknown> }
  | { type: 'preview'; preview: PreviewPayload }
  /** The stored record: each stream renders it with its own links. */
  | { type: 'output'; asset: AssetRecord };

/** The contract's PreviewEvent. */
export interface PreviewPayload {
  node_id: string;
  content_type: string;
  data_base64: string;
}

export type HubListener = (event: HubEvent) => void;

/**
 * What an account's live channel carries (the cloud-compatible `/ws` stream
 * is built from it): every engine event of its jobs, unthrottled, and each
 * lifecycle change, including the queue changing.
 */
export type AccountEvent =
  | { type: 'engine'; job_id: string; event: EngineEvent }
  | { type: 'output'; job_id: string; asset: AssetRecord }
  | {
      type: 'lifecycle';
      job_id: string;
      /** The job's status after the change ('queued' for a new or re-queued job). */
      status: string;
      error?: Record<string, unknown> | null;
    };

export type AccountListener = (event: AccountEvent) => void;

/**
 * Given to subscribe: called once the subscription hears every later event
 * (at once in process; once the bus listens, or after a bound if it cannot),
 * and again after each gap in which events may have been lost (the bus
 * reconnected): the subscriber then re-reads what it shows.
 */
export type OnLive = () => void;

export interface JobHub {
  /** Listens to one job's events until the returned function is called. */
  subscribe(jobId: string, listener: HubListener, onLive?: OnLive): () => void;
  publish(jobId: string, event: HubEvent): void;
  /** The most recent preview of a job running here, if any. */
  latestPreview(jobId: string): PreviewPayload | undefined;
  /** Drops what the hub keeps for a job that ended. */
  forget(jobId: string): void;
  /** Listens to everything about one account's jobs until the returned function is called. */
  subscribeAccount(accountId: string, listener: AccountListener, onLive?: OnLive): () => void;
  publishAccount(accountId: string, event: AccountEvent): void;
  /** Whether anyone listens to the account's channel (to skip building events nobody reads). */
  hasAccountListeners(accountId: string): boolean;
  /**
   * A job's status changed: tells its SSE streams and its account's channel.
   * `row`, the job as the change wrote it, spares the streams of this
   * instance a read of it; without one they read the row.
   */
  announce(job: { id: string; account_id: string }, status: string, error?: Record<string, unknown> | null, row?: JobSummary): void;
  /**
   * How many job events (publish, announce) this instance's listeners have
   * been handed so far, any job's, those from other instances included. A
   * subscriber that read a job's row before subscribing and finds the same
   * count once live knows that no event came in between: the row is as new
   * as a read then would be, since a change's event follows its write.
   */
  delivered(): number;
  /** Resolves once what is on its way to other instances has been sent (at once in process). */
  flush?(): Promise<void>;
}

export function createJobHub(onListenerError: (err: unknown) => void = () => {}): JobHub {
  const listeners = new Map<string, Set<HubListener>>();
  const accounts = new Map<string, Set<AccountListener>>();
  const previews = new Map<string, PreviewPayload>();
  let delivered = 0;

  function add<L>(map: Map<string, Set<L>>, key: string, listener: L): () => void {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  }

  function deliver<E>(set: Set<(event: E) => void> | undefined, event: E) {
    // A copy: a listener may unsubscribe (or subscribe another) while we iterate.
    for (const listener of [...(set ?? [])]) {
      try {
        listener(event);
      } catch (err) {
        // One broken stream must not keep the others (or the job) from their events.
        onListenerError(err);
      }
    }
  }

  return {
    subscribe(jobId, listener, onLive) {
      const off = add(listeners, jobId, listener);
      onLive?.();
      return off;
    },
    publish(jobId, event) {
      if (event.type === 'preview') previews.set(jobId, event.preview);
      delivered++;
      deliver(listeners.get(jobId), event);
    },
    subscribeAccount(accountId, listener, onLive) {
      const off = add(accounts, accountId, listener);
      onLive?.();
      return off;
    },
    publishAccount: (accountId, event) => deliver(accounts.get(accountId), event),
    hasAccountListeners: (accountId) => accounts.has(accountId),
    announce(job, status, error, row) {
      delivered++;
      deliver(listeners.get(job.id), (row ? { type: 'status', row } : { type: 'status' }) as HubEvent);
      deliver(accounts.get(job.account_id), { type: 'lifecycle', job_id: job.id, status, error } as AccountEvent);
    },
    latestPreview: (jobId) => previews.get(jobId),
    delivered: () => delivered,
    forget(jobId) {
      previews.delete(jobId);
    },
  };
}
