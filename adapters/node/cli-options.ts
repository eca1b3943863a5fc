// Command-line parsing for `graphrun`, apart from the CLI so it can be tested:
// flags win over GRAPHRUN_* environment variables, which win over defaults.
import { parseArgs } from 'node:util';
import type { WebhookEndpoint } from '../../index.ts';
import { type DeploymentsCliOptions, parseDeploymentsFile } from './cli-deployments-options.ts';
import { CliUsageError } from './cli-errors.ts';
import { type PoolCliOptions, parseAffinityWaitMs, parseRouting, readWarmup, requirePool } from './cli-pool-options.ts';
import { parseStorageOptions, type StorageCliOptions } from './cli-storage-options.ts';
import { DEFAULT_HOST, DEFAULT_PORT } from './cli-usage.ts';
import { parseBaseUrl, parseThreads, parseWorkers } from './cli-values.ts';
import { parseWebhookOptions } from './cli-webhook-options.ts';

export type { DeploymentCliOption, DeploymentsCliOptions } from './cli-deployments-options.ts';
export { CliUsageError } from './cli-errors.ts';
export { type BlobsCliOption, DEFAULT_DATA, type StorageCliOptions } from './cli-storage-options.ts';
export { DEFAULT_HOST, DEFAULT_PORT, USAGE } from './cli-usage.ts';

/** What `graphrun runner` takes: where the storage is, and how jobs run. */
export interface RunnerCliOptions extends StorageCliOptions {
  /** Outbound requests (LoadImageFromURL, video key frames, callbacks) may reach private, loopback and link-local addresses. */
  allowPrivateUrls: boolean;
  /** Worker base URLs: jobs run on these engine servers instead of in process. */
  workers: string[];
  /** Worker threads of the built-in engine; undefined: one per core. */
  threads: number | undefined;
  /** Seconds a runner's lease on a job lasts unless renewed (jobLeaseSeconds); undefined: the service's default. */
  jobLeaseSeconds: number | undefined;
  /** Vendor endpoints the generation routes (and partner nodes) forward to instead of generating locally. */
  musicUpstream: Upstream | undefined;
  videoUpstream: Upstream | undefined;
  /** Endpoints that receive job events (--webhook, GRAPHRUN_WEBHOOKS; secret GRAPHRUN_WEBHOOK_SECRET); undefined: none. */
  webhooks: WebhookEndpoint[] | undefined;
  /** More deployments beside 'default' (which the flags above configure), from --deployments; undefined: none. */
  deployments: DeploymentsCliOptions | undefined;
  /** How the --worker pool routes and warms up (--warmup, --routing, --affinity-wait-ms). */
  pool: PoolCliOptions;
}

/** What `graphrun serve` takes: the runner's options, and the HTTP side. */
export interface ServeCliOptions extends RunnerCliOptions {
  host: string;
  port: number;
  token: string | undefined;
  /** Required by /metrics and /ops/* when set (the service's operatorToken). */
  operatorToken: string | undefined;
  /** false: API only (--no-run-jobs), a `graphrun runner` on the same storage runs the jobs. */
  runJobs: boolean;
}

export interface Upstream {
  baseUrl: string;
  token: string;
}

export type CliCommand = { command: 'help' } | { command: 'serve'; options: ServeCliOptions } | { command: 'runner'; options: RunnerCliOptions };

/** Flags only `serve` has: a runner serves no HTTP and always runs jobs. */
const SERVE_ONLY = ['host', 'port', 'token', 'operator-token', 'no-run-jobs'] as const;

type Env = Record<string, string | undefined>;

function parsePort(raw: string, from: string): number {
  const port = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new CliUsageError(`${from} must be a port number from 0 to 65535, got "${raw}".`);
  return port;
}

function nonEmpty(value: string | undefined, from: string): string | undefined {
  if (value === '') throw new CliUsageError(`${from} must not be empty.`);
  return value;
}

/** A lease: whole seconds from 3 to 3600. */
function parseLeaseSeconds(raw: string, from: string): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 3 && n <= 3600)) throw new CliUsageError(`${from} must be a whole number of seconds from 3 to 3600, got "${raw}".`);
  return n;
}

/** A vendor endpoint: its URL from the flag or the variable, its token only from the environment (flags are visible to other users). */
function parseUpstream(flag: string | undefined, env: Env, kind: 'music' | 'video'): Upstream | undefined {
  const urlVar = `GRAPHRUN_${kind.toUpperCase()}_UPSTREAM_URL`;
  const tokenVar = `GRAPHRUN_${kind.toUpperCase()}_UPSTREAM_TOKEN`;
  const raw = flag ?? (env[urlVar] || undefined);
  if (raw === undefined) return undefined;
  const from = flag !== undefined ? `--${kind}-upstream` : urlVar;
  const baseUrl = parseBaseUrl(raw, from, `https://vendor.example/proxy/${kind}gen`);
  const token = env[tokenVar];
  if (!token) throw new CliUsageError(`${from} needs the vendor's token in ${tokenVar}.`);
  return { baseUrl, token };
}

/** A yes/no variable: 1 or true is on; 0 or false is off; unset or empty is `unset`; anything else is a mistake. */
function parseSwitch(raw: string | undefined, from: string, unset = false): boolean {
  if (raw === undefined || raw === '') return unset;
  const value = raw.toLowerCase();
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  throw new CliUsageError(`${from} must be 1, true, 0 or false, got "${raw}".`);
}

/** --warmup, --routing and --affinity-wait-ms (or their variables): the --worker pool's; refused without workers. */
function parsePoolFlags(
  values: { warmup?: string; routing?: string; 'affinity-wait-ms'?: string },
  fromEnv: (name: string) => string | undefined,
  workers: readonly string[],
): PoolCliOptions {
  const from = (flag: string, variable: string) => (values[flag as keyof typeof values] !== undefined ? `--${flag}` : variable);
  const warmup = values.warmup ?? fromEnv('GRAPHRUN_WARMUP');
  const routing = values.routing ?? fromEnv('GRAPHRUN_ROUTING');
  const wait = values['affinity-wait-ms'] ?? fromEnv('GRAPHRUN_AFFINITY_WAIT_MS');
  const names = {
    warmup: from('warmup', 'GRAPHRUN_WARMUP'),
    routing: from('routing', 'GRAPHRUN_ROUTING'),
    affinityWaitMs: from('affinity-wait-ms', 'GRAPHRUN_AFFINITY_WAIT_MS'),
  };
  const pool: PoolCliOptions = {
    ...(warmup !== undefined && { warmup: readWarmup(warmup, names.warmup) }),
    ...(routing !== undefined && { routing: parseRouting(routing, names.routing) }),
    ...(wait !== undefined && { affinityWaitMs: parseAffinityWaitMs(wait, names.affinityWaitMs) }),
  };
  requirePool(pool, names, workers, 'the deployment the flags configure');
  return pool;
}

export function parseCliArgs(argv: readonly string[], env: Env = {}): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        data: { type: 'string' },
        database: { type: 'string' },
        blobs: { type: 'string' },
        token: { type: 'string' },
        'operator-token': { type: 'string' },
        // Declared as is: parseArgs knows negated booleans only from Node 22.
        'no-run-jobs': { type: 'boolean' },
        'allow-private-urls': { type: 'boolean' },
        worker: { type: 'string', multiple: true },
        threads: { type: 'string' },
        'job-lease-seconds': { type: 'string' },
        'music-upstream': { type: 'string' },
        'video-upstream': { type: 'string' },
        webhook: { type: 'string', multiple: true },
        deployments: { type: 'string' },
        warmup: { type: 'string' },
        routing: { type: 'string' },
        'affinity-wait-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    // parseArgs' own wording is clear ("Unknown option '--x'"); keep it.
    throw new CliUsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  const [command, ...extra] = positionals;
  if (command === undefined) throw new CliUsageError('No command given.');
  if (command !== 'serve' && command !== 'runner') throw new CliUsageError(`Unknown command "${command}".`);
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument "${extra[0]}".`);

  // An empty variable counts as unset: `GRAPHRUN_PORT= graphrun serve` is a common way to clear one.
  const fromEnv = (name: string) => env[name] || undefined;
  const threads = values.threads ?? fromEnv('GRAPHRUN_THREADS');
  const lease = values['job-lease-seconds'] ?? fromEnv('GRAPHRUN_JOB_LEASE_SECONDS');
  const workers = values.worker
    ? parseWorkers(values.worker, '--worker')
    : parseWorkers(
        (fromEnv('GRAPHRUN_WORKERS') ?? '')
          .split(',')
          .map((w) => w.trim())
          .filter(Boolean),
        'GRAPHRUN_WORKERS',
      );
  const storage = parseStorageOptions(values, env);
  const pool = parsePoolFlags(values, fromEnv, workers);
  const deploymentsFile = nonEmpty(values.deployments, '--deployments') ?? fromEnv('GRAPHRUN_DEPLOYMENTS');
  const runner: RunnerCliOptions = {
    ...storage,
    allowPrivateUrls: values['allow-private-urls'] === true || parseSwitch(env.GRAPHRUN_ALLOW_PRIVATE_URLS, 'GRAPHRUN_ALLOW_PRIVATE_URLS'),
    workers,
    threads: threads === undefined ? undefined : parseThreads(threads, values.threads !== undefined ? '--threads' : 'GRAPHRUN_THREADS'),
    jobLeaseSeconds:
      lease === undefined
        ? undefined
        : parseLeaseSeconds(lease, values['job-lease-seconds'] !== undefined ? '--job-lease-seconds' : 'GRAPHRUN_JOB_LEASE_SECONDS'),
    musicUpstream: parseUpstream(values['music-upstream'], env, 'music'),
    videoUpstream: parseUpstream(values['video-upstream'], env, 'video'),
    webhooks: parseWebhookOptions(values.webhook, env),
    pool,
    deployments:
      deploymentsFile === undefined
        ? undefined
        : parseDeploymentsFile(deploymentsFile, values.deployments !== undefined ? '--deployments' : 'GRAPHRUN_DEPLOYMENTS', {
            database: storage.database !== undefined,
            defaultWorkers: workers,
          }),
  };
  if (command === 'runner') {
    // The serve-only variables are not read, so one environment file can serve both commands; a flag is a mistake.
    const misplaced = SERVE_ONLY.find((name) => values[name] !== undefined);
    if (misplaced) throw new CliUsageError(`--${misplaced} is for "graphrun serve": a runner serves no HTTP and always runs jobs.`);
    return { command: 'runner', options: runner };
  }

  const port = values.port ?? fromEnv('GRAPHRUN_PORT');
  return {
    command: 'serve',
    options: {
      host: nonEmpty(values.host, '--host') ?? fromEnv('GRAPHRUN_HOST') ?? DEFAULT_HOST,
      port: port === undefined ? DEFAULT_PORT : parsePort(port, values.port !== undefined ? '--port' : 'GRAPHRUN_PORT'),
      token: nonEmpty(values.token, '--token') ?? fromEnv('GRAPHRUN_TOKEN'),
      operatorToken: nonEmpty(values['operator-token'], '--operator-token') ?? fromEnv('GRAPHRUN_OPERATOR_TOKEN'),
      runJobs: values['no-run-jobs'] !== true && parseSwitch(env.GRAPHRUN_RUN_JOBS, 'GRAPHRUN_RUN_JOBS', true),
      ...runner,
    },
  };
}
