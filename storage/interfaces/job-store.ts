// Jobs: the durable rows behind the job state machine (core/jobs), the
// queue the scheduler takes from and the listings the APIs page through.
//
// A workflow may weigh megabytes, and an account may have a hundred of them
// queued: every read but one leaves it out (JobSummary). Only
// listJobWorkflows reads it, for the jobs named, so whoever shows or runs
// workflows holds as many at once as it asks for.

import type { NewWebhookDelivery } from './webhook-outbox-store.ts';

/** A job row without its workflow. Times are epoch ms; JSON columns hold what the API shows. */
export interface JobSummary {
  id: string;
  account_id: string;
  /** One of core/jobs/state-machine's JobStatus values. */
  status: string;
  /** Monotonic submission order; FIFO per account comes from it. */
  seq: number;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  /** Retention deadline; the job turns `expired` after it. */
  expires_at: number;
  /** Latest progress snapshot, or null. */
  progress: Record<string, unknown> | null;
  /** The JobError of a failed job, or null. */
  error: Record<string, unknown> | null;
  /** How many times execution was started (a restart re-runs a running job). */
  attempts: number;
  /** Pick order within the account's queue: higher first, then `seq` (FIFO within a priority). Default 0. */
  priority: number;
  /** The caller's JSON object given at submission, shown with the job; null when none was. */
  metadata: Record<string, unknown> | null;
  /** Whether the engine answered some of the job's nodes from results of an earlier run. */
  outputs_reused: boolean;
  /** When the account took the finished job out of its history (hideFromHistory), or null: shown. */
  history_hidden_at: number | null;
  /**
   * The nodes the engine said it served from cache as its run started (the
   * reference's execution_cached), in its order; null until a run ends, or
   * when the engine never said.
   */
  cached_nodes: string[] | null;
  /** Ids of the temporary files (previews) the run committed, in commit order; they are no outputs of the job. */
  temp_asset_ids: string[];
  /** The runner holding the running job (claimJob), or null: none does (queued, ended, or started before leases). */
  lease: JobLease | null;
  /**
   * How often the job's outputs changed, as JobStamp says: 0 while it has
   * none, so a view of it need not look for them (a running job's polls).
   */
  view_version: number;
}

/**
 * What can change in a finished job's view: its status (expired, or gone when
 * null), its retention, and `view_version`, which every change of its outputs
 * bumps in the same transaction (an output committed, deleted, swept or
 * blocked). A view built from reads made after the stamp was read is that
 * stamp's view, or a later one; never an earlier one.
 */
export interface JobStamp {
  status: string;
  expires_at: number;
  view_version: number;
}

/**
 * A runner's hold on a job it claimed. The runner renews it while it runs
 * the job; once `expires_at` passes, any live runner may take the job back
 * (listExpiredLeases). `token` grows with every claim and release: each
 * write of the run carries it (JobGuard), so a runner whose lease was taken
 * back cannot write any more.
 */
export interface JobLease {
  /** Who claimed it: a runner's id, unique per process. */
  owner: string;
  /** The fencing token of this claim. */
  token: number;
  /** Epoch ms. */
  expires_at: number;
}

/** What claimJob needs: whose job, how many the account may run, and the lease to take. */
export interface JobClaim {
  account_id: string;
  /** The account's parallel-job limit: no claim while it has this many running or canceling. */
  limit: number;
  owner: string;
  now: number;
  /** How long the lease lasts unless renewed. */
  lease_ms: number;
  /**
   * Only while no other account has queued jobs, checked in the same step:
   * the claim a pass makes when this account's line is the only one, so a
   * submission that starts its job at once takes nobody's turn.
   */
  alone?: boolean;
}

/** Extra conditions of a transition, beyond the status it moves from. */
export interface JobGuard {
  /** Only while the job's fencing token is this one (the writer still holds its lease). */
  lease_token?: number;
  /** Only if its lease expired before this time, or it has none (taking a job back from a runner that died). */
  lease_expired_before?: number;
}

/** A whole job row: its summary and the workflow. */
export interface JobRecord extends JobSummary {
  /** The API-format workflow as submitted (never the extra_data). */
  workflow: Record<string, unknown>;
}

/** A job's workflow, as listJobWorkflows reads it. */
export interface JobWorkflow {
  id: string;
  workflow: Record<string, unknown>;
}

export type NewJob = Omit<
  JobRecord,
  | 'seq'
  | 'started_at'
  | 'completed_at'
  | 'progress'
  | 'error'
  | 'attempts'
  | 'priority'
  | 'metadata'
  | 'outputs_reused'
  | 'history_hidden_at'
  | 'cached_nodes'
  | 'temp_asset_ids'
  | 'lease'
  | 'view_version'
> & {
  /** Default 0. */
  priority?: number;
  /** Default null. */
  metadata?: Record<string, unknown> | null;
};

/** What a job is at creation beside what NewJob gives: not started, not ended, nothing run, shown in history. */
export const FRESH_JOB = {
  started_at: null,
  completed_at: null,
  progress: null,
  error: null,
  attempts: 0,
  history_hidden_at: null,
} as const;

/** Bounds on queued jobs that createJob checks before it inserts. */
export interface QueueBounds {
  /** Queued jobs of all accounts. */
  maxQueued?: number;
  /** Queued jobs of the new job's account. */
  maxQueuedPerAccount?: number;
}

/** claimJob's job: its row and its workflow. */
export type ClaimedJob = JobSummary & { workflow: Record<string, unknown> };

/**
 * createJob's row under bounds, with how many jobs (of all accounts) were
 * queued when it was inserted, as the `maxQueued` check counted them (absent
 * without that bound): what the new job has ahead of it, at no extra read.
 */
export type BoundedJob = JobSummary & { queued_before?: number };

/** createJob's answer when a bound is reached: which one, how many are queued, and the bound. */
export interface QueueRefusal {
  refused: 'queue' | 'account';
  queued: number;
  limit: number;
}

export interface JobPatch {
  started_at?: number | null;
  completed_at?: number | null;
  progress?: Record<string, unknown> | null;
  error?: Record<string, unknown> | null;
  outputs_reused?: boolean;
  cached_nodes?: string[] | null;
  temp_asset_ids?: string[];
  /** Adds this many to `attempts`. */
  add_attempts?: number;
  /** null: releases the lease (a later claim takes a new token; this one no longer fences anything). */
  lease?: null;
  /** Deliveries announcing the move, written in the same transaction, only when the move happens. */
  outbox?: readonly NewWebhookDelivery[];
}

/** Which of an account's jobs a listing takes. */
export interface AccountJobFilter {
  /** Only jobs in these statuses; an empty list matches none. */
  statuses: string[];
  /** Only jobs whose `expires_at` is later than this (retention not over). */
  expires_after?: number;
  /** Only jobs with at least one output asset of this `output_type`. */
  output_type?: string;
  /** true: only jobs still in the account's history (never hidden by hideFromHistory). */
  in_history?: boolean;
}

export interface AccountJobQuery extends AccountJobFilter {
  /**
   * `seq` (submission order, the default) or `execution_time`
   * (completed_at - started_at; jobs without both come last either way, then by seq).
   */
  sort?: 'seq' | 'execution_time';
  /** Default `desc`: newest (or longest) first. */
  order?: 'asc' | 'desc';
  limit: number;
  offset?: number;
  /**
   * Only jobs with a lower `seq`: the next page of a newest-first listing
   * after one that ended at this seq (keyset paging, which neither skips nor
   * repeats a job when jobs are submitted between two pages).
   */
  before_seq?: number;
}

/** One row of countJobsByTier: the jobs of one status whose accounts are of one tier. */
export interface JobTierCount {
  tier: string;
  status: string;
  count: number;
  /** `created_at` of the oldest of them (epoch ms): for `queued`, how long the queue's head has waited. */
  oldest_created_at: number;
}

/**
 * Job persistence: every status change is a compare-and-set on the current
 * status. Jobs share their database with the AssetStore they are composed
 * with: the `output_type` filter reads the job's output assets.
 */
export interface JobStore {
  /**
   * true: the store runs its writes one at a time in the order they were
   * called (one connection, or none), so a write sees every write called
   * before it. The scheduler then writes a run's end just ahead of the
   * claims that fill its slot, and claims a pass's jobs at once; SQLite
   * commits writes queued together as one. Absent: writes may overtake each other (a pool).
   */
  readonly serialWrites?: boolean;
  /** Inserts a job (status as given, normally `queued`) and returns its row, with its `seq`, without the workflow. */
  createJob(job: NewJob): Promise<JobSummary>;
  /**
   * The same under queue bounds, counted in the insert's own step so that they
   * hold across every instance sharing the store: a refusal instead of the
   * row when the queue (or the account's share of it) is full.
   */
  createJob(job: NewJob, bounds: QueueBounds): Promise<BoundedJob | QueueRefusal>;
  /** The account's job, or null (another account's job is null too). */
  getJob(accountId: string, id: string): Promise<JobSummary | null>;
  /**
   * The account's job in three columns, or null: the one read that checks a
   * kept view of a finished job (core/jobs/view-cache.ts) is still the view.
   */
  getJobStamp(accountId: string, id: string): Promise<JobStamp | null>;
  /** Any account's job, for the scheduler. */
  getJobById(id: string): Promise<JobSummary | null>;
  /**
   * The workflows of these jobs of the account, in the order asked; an id
   * of another account or of no job is left out. The one read of the
   * workflow column: callers ask for a few jobs at a time.
   */
  listJobWorkflows(accountId: string, ids: readonly string[]): Promise<JobWorkflow[]>;
  /**
   * Moves the job from `from` to `to` only if it is still in `from`, applying
   * the patch in the same statement. Resolves to the job as the move left it
   * (the row the statement wrote, so a caller can show it without reading it
   * again); null when another writer moved it first, or the guard failed.
   */
  transitionJob(id: string, from: string, to: string, patch?: JobPatch, guard?: JobGuard): Promise<JobSummary | null>;
  /**
   * Stores a progress snapshot, and `outputs_reused` when given, unless the
   * job has left `running`/`canceling` (or, with `leaseToken`, its lease has
   * moved on).
   */
  saveProgress(id: string, progress: Record<string, unknown>, outputsReused?: boolean, leaseToken?: number): Promise<void>;
  /**
   * Atomically, as one step for all runners sharing the store: if the
   * account has fewer than `limit` jobs running or canceling, moves its next
   * queued job in pick order to `running` (started_at, attempts + 1) under a
   * new lease, and returns it; null when the account is at its limit or has
   * nothing queued. The job comes with its workflow, read in the same step
   * (the run needs it next: no read of its own).
   */
  claimJob(claim: JobClaim): Promise<ClaimedJob | null>;
  /**
   * Extends a lease to `expiresAt` while the job is running or canceling and
   * `token` is still its lease's; returns the job's status then, or null when
   * the lease is gone (taken back, released, or the job ended).
   */
  renewLease(id: string, token: number, expiresAt: number): Promise<string | null>;
  /** Running or canceling jobs whose lease expired before `now` (or that have none), oldest `seq` first. */
  listExpiredLeases(now: number, limit: number): Promise<JobSummary[]>;
  /** Jobs in one of these statuses, oldest `seq` first. */
  listJobsByStatus(statuses: string[], limit: number): Promise<JobSummary[]>;
  /** One account's jobs matching the filter, in the query's order, one page of them. */
  listAccountJobs(accountId: string, query: AccountJobQuery): Promise<JobSummary[]>;
  /** How many of the account's jobs match the filter (the total a page is out of). */
  countAccountJobs(accountId: string, filter: AccountJobFilter): Promise<number>;
  /** Queued jobs an account may start next, in pick order: higher `priority` first, then oldest `seq` first. */
  listQueuedJobs(accountId: string, limit: number): Promise<JobSummary[]>;
  /**
   * Accounts that have queued jobs, oldest queued job first, each with that
   * job's `seq`, when any runner last claimed a job of the account
   * (claimJob's `now`; 0 if never): the turns accounts take, across runners;
   * and how many jobs it has queued (the most a pass claims for it).
   */
  listAccountsWithQueuedJobs(limit: number): Promise<Array<{ account_id: string; oldest_seq: number; last_claimed_at: number; queued: number }>>;
  /**
   * Up to `limit` accounts with queued jobs, in no order, each with how many:
   * a pass that finds none or one has no turns to settle, and spares the
   * listing above (the costliest read of a pass). Optional: without it the
   * scheduler always lists.
   */
  peekQueuedAccounts?(limit: number): Promise<Array<{ account_id: string; queued: number }>>;
  countJobs(statuses: string[], accountId?: string): Promise<number>;
  /**
   * Jobs in these statuses counted by status and their account's tier (an
   * account without a row counts as tier `default`, what upsertAccount
   * gives it), with the oldest's created_at: the fleet's gauges and queue
   * depth per tier in one grouped read. Groups with no job are left out.
   */
  countJobsByTier(statuses: string[]): Promise<JobTierCount[]>;
  /**
   * For a store that keeps counts of queued jobs apart from the jobs (SQL):
   * sets each account's count to its queued jobs where the two differ, and
   * says which it corrected (the sweep logs them). A store that counts the
   * jobs themselves has nothing to repair and leaves it out.
   */
  repairQueueCounts?(): Promise<Array<{ account_id: string; was: number; is: number }>>;
  /**
   * Queued jobs ahead of this one (its 0-based place in the global queue):
   * other accounts' jobs submitted before it, and its account's jobs before
   * it in pick order (a higher priority, or the same one and submitted before).
   */
  countQueuedBefore(job: Pick<JobSummary, 'seq' | 'account_id' | 'priority'>): Promise<number>;
  /**
   * Takes the account's jobs in these statuses out of its history (sets
   * `history_hidden_at` to `at` where it is null): the jobs named, or all of
   * them. Ids of other accounts or of jobs in other statuses are left alone.
   * Returns how many this call hid.
   */
  hideFromHistory(accountId: string, statuses: string[], ids: readonly string[] | 'all', at: number): Promise<number>;
  /** Terminal jobs whose `expires_at` passed: moved to `expired` (CAS); returns their ids. */
  expireJobs(terminalStatuses: string[], now: number, limit: number): Promise<string[]>;
}
