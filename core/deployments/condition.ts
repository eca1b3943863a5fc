// A deployment's condition, as the contract names them: ready, not ready
// (429 deployment_not_ready, it may still become ready) and stopped (422
// deployment_stopped, only an operator brings it back). Stopped is the
// operator's word, kept in the deployment's storage so every instance on it
// agrees; ready or not follows the deployment's engine: not ready while it
// starts and can take no job (a worker pool no server has answered yet); a
// pool warming up, or whose servers all went away later, stays ready, its
// jobs queued for the servers to come.
//
// Requests look at the condition synchronously: the stored flag is read at
// start, re-read every `intervalMs` and at once when another instance says
// it changed (the event bus), never per request.
import type { Engine } from '../../engine/types.ts';
import type { EventBus, SettingsStore } from '../../storage/types.ts';
import type { Logger } from '../types.ts';

export type DeploymentState = 'ready' | 'not_ready' | 'stopped';

export interface DeploymentConditionView {
  state: DeploymentState;
  /** Why it is not ready, or who stopped it and when; none when ready. */
  detail?: string;
}

export interface DeploymentCondition {
  /** The deployment's DNS-safe id ('default' for a service that was given none). */
  readonly id: string;
  current(): DeploymentConditionView;
  /** Whether the operator has stopped it (as this instance last read the storage). */
  stopped(): boolean;
  /** The operator's moves: stored, applied here at once, then told to the other instances. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Runs after every move from stopped to started, here or heard of (the scheduler looks for work again). */
  onStarted(listener: () => void): void;
  /** Reads the stored flag, then keeps it fresh. */
  open(): Promise<void>;
  close(): void;
}

/** The settings key of the operator's flag; the value is the time of the stop (ms) or '' when started. */
const STOPPED_KEY = 'deployment.stopped_at';
/** The deployment a storage belongs to, written by the first start: a second deployment on it would take its jobs. */
const OWNER_KEY = 'deployment.id';

/** The storage belongs to another deployment: each deployment needs its own. */
export class DeploymentStorageError extends Error {
  override name = 'DeploymentStorageError';
}
export const DEPLOYMENT_CHANNEL = 'deployment';

/** A deployment id: one DNS label (lower case), so it can be a subdomain. */
export const DEPLOYMENT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export interface DeploymentConditionOptions {
  id: string;
  store: SettingsStore;
  events: EventBus | undefined;
  engine: Engine;
  logger: Logger;
  now: () => number;
  /** How often the stored flag is re-read (the fallback where no bus tells of a change); 0: only at start and on bus messages. */
  intervalMs: number;
}

export function createDeploymentCondition(opts: DeploymentConditionOptions): DeploymentCondition {
  const { id, store, events, engine, logger } = opts;
  let stoppedAt: number | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopHearing: (() => void) | undefined;
  const started: Array<() => void> = [];
  const warn = (what: string) => (err: unknown) => logger.warn(what, { deployment: id, error: String(err) });

  function apply(value: number | null) {
    const wasStopped = stoppedAt !== null;
    stoppedAt = value;
    if (wasStopped && value === null) for (const listener of started) listener();
  }

  const parse = (raw: string | null) => (raw === null || raw === '' ? null : Number(raw));
  const refresh = () =>
    store
      .getSetting(STOPPED_KEY)
      .then((raw) => apply(parse(raw)))
      .catch(warn('reading the deployment condition failed'));

  async function move(value: number | null) {
    await store.putSetting(STOPPED_KEY, value === null ? '' : String(value));
    apply(value);
    logger.info(value === null ? 'deployment started' : 'deployment stopped', { deployment: id });
    events?.publish(DEPLOYMENT_CHANNEL, '').catch(warn('could not tell the other instances of the deployment condition'));
  }

  return {
    id,
    current() {
      if (stoppedAt !== null) return { state: 'stopped', detail: `stopped by an operator at ${new Date(stoppedAt).toISOString()}` };
      const readiness = engine.readiness();
      if (readiness.state === 'ready') return { state: 'ready' };
      // Starting and unable to take a job: no server has answered yet, so not even its nodes are known.
      if (readiness.state === 'starting' && readiness.queuesJobs !== true) return { state: 'not_ready', detail: readiness.detail };
      // Warming up, or every server gone or down after the pool knew its nodes: it still takes work, the jobs
      // wait in the queue (whose depth is what an autoscaler reads to bring servers back).
      return { state: 'ready', detail: `${readiness.detail}; jobs wait in the queue` };
    },
    stopped: () => stoppedAt !== null,
    async stop() {
      // Read, not taken from what this instance last heard: another one may have started it since.
      const stored = parse(await store.getSetting(STOPPED_KEY));
      // A second stop keeps the first one's time: it says since when the deployment has been stopped.
      if (stored !== null) apply(stored);
      else await move(opts.now());
    },
    start: () => move(null),
    onStarted(listener) {
      started.push(listener);
    },
    async open() {
      const owner = await store.initSetting(OWNER_KEY, id);
      if (owner !== id) {
        throw new DeploymentStorageError(
          `This storage belongs to the deployment "${owner}", not "${id}": every deployment needs its own database (or schema) and blob store, since the scheduler of one would run the other's jobs.`,
        );
      }
      // At start the store must answer: a stopped deployment must not take jobs for a moment.
      apply(parse(await store.getSetting(STOPPED_KEY)));
      stopHearing = events?.subscribe(
        DEPLOYMENT_CHANNEL,
        () => void refresh(),
        () => void refresh(),
      );
      if (opts.intervalMs > 0) {
        timer = setInterval(() => void refresh(), opts.intervalMs);
        (timer as { unref?: () => void }).unref?.();
      }
    },
    close() {
      if (timer !== undefined) clearInterval(timer);
      stopHearing?.();
    },
  };
}
