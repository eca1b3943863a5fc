// Finished jobs' views as GET /api/v2/jobs/{id} last sent them, kept as JSON
// text so a poll of a finished job costs one small read (its stamp) instead
// of the job row, its outputs, the view and its serialization.
//
// It stays right across instances because nothing is trusted without that
// read: the stamp's view version moves with every change of the job's
// outputs, in the transaction that makes it (an output deleted, swept or
// blocked, on whichever instance), and status and retention come with it. A
// view is kept only for a finished job and is keyed by what else it was built
// from: the account, the link base and mount prefix of the request, and the
// step of the signed-URL expiry grid (core/signing.ts), so a new step signs
// the outputs' URLs again.
//
// Where the store has a commit mark (MetadataStore.commitMark: SQLite), the
// view also keeps the mark taken before the stamp read that last found it
// current. While the mark has not moved, nothing anywhere was committed after
// that read, so the stamp is what it was and the read can be skipped. A
// mark costs a fraction of the read (bench:jobs part 3).
import type { JobStamp } from '../../storage/types.ts';

export interface KeptView {
  account_id: string;
  /** Link base, mount prefix and expiry step the view was built for. */
  key: string;
  /** The job's stamp the view was built under. */
  stamp: JobStamp;
  text: string;
  /** The store's commit mark taken before the stamp read that last found the view current. */
  mark?: string;
}

export interface JobViewCache {
  /** Whether some view of this job is kept: only then is its stamp worth reading first. */
  has(jobId: string): boolean;
  /**
   * The kept text for this job, account, key and stamp, or undefined. `mark`:
   * the commit mark taken before `stamp` was read, kept with the view on a hit.
   */
  get(jobId: string, accountId: string, key: string, stamp: JobStamp, mark?: string): string | undefined;
  /** The view kept for this job, account and key if it was last found current under this very commit mark. */
  unchanged(jobId: string, accountId: string, key: string, mark: string): KeptView | undefined;
  set(jobId: string, view: KeptView): void;
  readonly size: number;
}

/** Views kept at most, and their text at most in UTF-16 code units (a view with many outputs is large). */
export interface JobViewCacheLimits {
  entries: number;
  chars: number;
}

export function createJobViewCache(limits: JobViewCacheLimits): JobViewCache {
  // A Map iterates in insertion order: re-inserting on a hit makes it an LRU.
  const views = new Map<string, KeptView>();
  let chars = 0;
  const touch = (jobId: string, view: KeptView) => {
    views.delete(jobId);
    views.set(jobId, view);
    return view;
  };
  const drop = (jobId: string, view: KeptView) => {
    views.delete(jobId);
    chars -= view.text.length;
  };
  return {
    has: (jobId) => views.has(jobId),
    get(jobId, accountId, key, stamp, mark) {
      const view = views.get(jobId);
      // Another version, account or key: it is built again and replaces this one.
      if (view === undefined || view.account_id !== accountId || view.stamp.view_version !== stamp.view_version || view.key !== key) return undefined;
      // Status and retention may have moved without the outputs (expired): the view keeps the latest.
      view.stamp = stamp;
      view.mark = mark;
      return touch(jobId, view).text;
    },
    unchanged(jobId, accountId, key, mark) {
      const view = views.get(jobId);
      if (view === undefined || view.mark !== mark || view.account_id !== accountId || view.key !== key) return undefined;
      return touch(jobId, view);
    },
    set(jobId, view) {
      const old = views.get(jobId);
      if (old !== undefined) drop(jobId, old);
      // Too large to keep: the older one is gone too, so polls of it do not read its stamp for nothing.
      if (limits.entries <= 0 || view.text.length > limits.chars) return;
      views.set(jobId, view);
      chars += view.text.length;
      for (const [id, oldest] of views) {
        if (views.size <= limits.entries && chars <= limits.chars) break;
        drop(id, oldest);
      }
    },
    get size() {
      return views.size;
    },
  };
}
