// In-process fan-out of a job's live events to the SSE streams (and later
// the WebSocket peers) of this instance. The job row stays the source of
// truth; the hub only carries what happens between two reads of it, plus the
// latest preview, which no row holds (the contract keeps only the newest one).
import type { AssetRecord } from '../../storage/types.ts';

export type HubEvent =
  | { type: 'status' }
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

export interface JobHub {
  /** Listens to one job's events until the returned function is called. */
  subscribe(jobId: string, listener: HubListener): () => void;
  publish(jobId: string, event: HubEvent): void;
  /** The most recent preview of a job running here, if any. */
  latestPreview(jobId: string): PreviewPayload | undefined;
  /** Drops what the hub keeps for a job that ended. */
  forget(jobId: string): void;
}

export function createJobHub(onListenerError: (err: unknown) => void = () => {}): JobHub {
  const listeners = new Map<string, Set<HubListener>>();
  const previews = new Map<string, PreviewPayload>();

  return {
    subscribe(jobId, listener) {
      let set = listeners.get(jobId);
      if (!set) listeners.set(jobId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(jobId) === set) listeners.delete(jobId);
      };
    },
    publish(jobId, event) {
      if (event.type === 'preview') previews.set(jobId, event.preview);
      // A copy: a listener may unsubscribe (or subscribe another) while we iterate.
      for (const listener of [...(listeners.get(jobId) ?? [])]) {
        try {
          listener(event);
        } catch (err) {
          // One broken stream must not keep the others (or the job) from their events.
          onListenerError(err);
        }
      }
    },
    latestPreview: (jobId) => previews.get(jobId),
    forget(jobId) {
      previews.delete(jobId);
    },
  };
}
