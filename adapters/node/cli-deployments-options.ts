// `--deployments <file.json>` (GRAPHRUN_DEPLOYMENTS) for `graphrun serve` and
// `graphrun runner`: more deployments beside the one the flags configure
// ('default'), each with its own engine and its own storage, behind one
// address. The file is read and checked here, whole, while the command line
// is parsed: a mistake in it is a usage mistake (exit 2) that names the
// entry, never a failure after some deployments have started.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { checkDomain } from '../../core/deployments/address.ts';
import { DEPLOYMENT_ID } from '../../core/deployments/condition.ts';
import { checkPathPrefix } from '../../core/deployments/path-prefix.ts';
import { isRecord } from '../../lib/is-record.ts';
import { CliUsageError } from './cli-errors.ts';
import { type PoolCliOptions, parseAffinityWaitMs, parseRouting, readWarmup, requirePool } from './cli-pool-options.ts';
import { parseBaseUrl, parseThreads } from './cli-values.ts';

export interface DeploymentCliOption {
  id: string;
  /** Addressed on the staging domains instead of the base ones. */
  staging: boolean;
  /** Engine servers it runs jobs on; none: the built-in engine. */
  workers: string[];
  /** Threads of its built-in engine; undefined: one per core. */
  threads: number | undefined;
  /** How its pool routes and warms up ("warmup" names a file, relative to the deployments file). */
  pool: PoolCliOptions;
}

export interface DeploymentsCliOptions {
  /** The file, as given: the logs name it. */
  file: string;
  baseDomains: string[];
  stagingDomains: string[];
  /** undefined: the gateway's default (/deployment); false: by host only. */
  pathPrefix: string | false | undefined;
  deployments: DeploymentCliOption[];
}

type Json = Record<string, unknown>;

const TOP_KEYS = ['baseDomains', 'stagingDomains', 'pathPrefix', 'deployments'];
const ENTRY_KEYS = ['id', 'staging', 'workers', 'threads', 'warmup', 'routing', 'affinityWaitMs'];
/** PostgreSQL names are at most 63 bytes: `deployment_` leaves 52 for the id, beyond which two ids could share a schema. */
const MAX_PG_ID = 63 - 'deployment_'.length;

function noUnknownKeys(value: Json, allowed: string[], where: string, fail: (m: string) => never): void {
  const extra = Object.keys(value).find((k) => !allowed.includes(k));
  if (extra !== undefined) fail(`${where}has an unknown key "${extra}" (allowed: ${allowed.join(', ')})`);
}

function stringList(value: unknown, where: string, fail: (m: string) => never): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) fail(`${where} must be a list of strings`);
  return value as string[];
}

/** The whole file's contents, checked: `from` names the flag or variable, `database` whether ids become PostgreSQL schemas. */
export function parseDeployments(
  raw: unknown,
  from: string,
  options: { database: boolean; defaultWorkers: readonly string[]; dir?: string },
): Omit<DeploymentsCliOptions, 'file'> {
  const fail = (message: string): never => {
    throw new CliUsageError(`${from}: ${message}.`);
  };
  // The checks of core and cli-values throw their own wording: kept, placed under the file's name.
  const checked = <T>(run: () => T): T => {
    try {
      return run();
    } catch (err) {
      return fail((err instanceof Error ? err.message : String(err)).replace(/\.$/, ''));
    }
  };
  if (!isRecord(raw)) return fail('must be a JSON object with a "deployments" list');
  noUnknownKeys(raw, TOP_KEYS, 'the file ', fail);
  const baseDomains = stringList(raw.baseDomains, 'baseDomains', fail).map((d, i) => checked(() => checkDomain(d, `baseDomains[${i}]`)));
  const stagingDomains = stringList(raw.stagingDomains, 'stagingDomains', fail).map((d, i) => checked(() => checkDomain(d, `stagingDomains[${i}]`)));
  const both = baseDomains.find((d) => stagingDomains.includes(d));
  if (both !== undefined) fail(`${both} is both a base and a staging domain: a host must name one deployment`);
  const pathPrefix = parsePrefix(raw.pathPrefix, fail);

  if (!Array.isArray(raw.deployments) || raw.deployments.length === 0) fail('"deployments" must be a list of at least one deployment');
  const ids = new Set<string>();
  const workerOwner = new Map<string, string>(options.defaultWorkers.map((w) => [w, 'default (--worker)']));
  const deployments = (raw.deployments as unknown[]).map((entry, i): DeploymentCliOption => {
    const at = `deployments[${i}]`;
    if (!isRecord(entry)) return fail(`${at} must be an object such as {"id": "sdxl", "workers": ["http://gpu-1:8188"]}`);
    noUnknownKeys(entry, ENTRY_KEYS, `${at} `, fail);
    const id = entry.id;
    if (typeof id !== 'string' || !DEPLOYMENT_ID.test(id)) {
      fail(`${at}.id must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63 characters), got ${JSON.stringify(id)}`);
    }
    const where = `deployment "${id}"`;
    if (id === 'default') fail(`${at}.id cannot be "default": that is the deployment the command-line flags configure`);
    if (ids.has(id as string)) fail(`${at}.id "${id}" is given twice: every deployment needs its own id`);
    if (options.database && (id as string).length > MAX_PG_ID) {
      fail(`${at}.id "${id}" is too long for its PostgreSQL schema deployment_${id}: at most ${MAX_PG_ID} characters`);
    }
    ids.add(id as string);
    if (entry.staging !== undefined && typeof entry.staging !== 'boolean') fail(`${at}.staging must be true or false`);
    const workers = stringList(entry.workers, `${at}.workers`, fail).map((w, j) =>
      checked(() => parseBaseUrl(w, `${at}.workers[${j}]`, 'http://gpu-1:8188')),
    );
    for (const w of workers) {
      const owner = workerOwner.get(w);
      // Each deployment counts the jobs it runs on its workers in its own storage: a shared worker would be overbooked.
      if (owner !== undefined) fail(`${w} is a worker of both ${owner} and ${where}: a worker belongs to one deployment`);
      workerOwner.set(w, where);
    }
    let threads: number | undefined;
    if (entry.threads !== undefined) {
      if (workers.length > 0) fail(`${at}.threads is for the built-in engine, which ${where} does not run: it has workers`);
      if (typeof entry.threads !== 'number') fail(`${at}.threads must be a number from 1 to 256, got ${JSON.stringify(entry.threads)}`);
      threads = checked(() => parseThreads(String(entry.threads), `${at}.threads`));
    }
    const staging = entry.staging === true;
    // Unreachable deployments are a mistake better said now than found by a client's 404.
    if (pathPrefix === false && (staging ? stagingDomains : baseDomains).length === 0) {
      fail(`${where} cannot be reached: pathPrefix is false and there are no ${staging ? 'stagingDomains' : 'baseDomains'}`);
    }
    if (entry.warmup !== undefined && typeof entry.warmup !== 'string') fail(`${at}.warmup must be the path of a workflow file`);
    const pool: PoolCliOptions = {
      ...(entry.warmup !== undefined && { warmup: checked(() => readWarmup(resolve(options.dir ?? '.', entry.warmup as string), `${at}.warmup`)) }),
      ...(entry.routing !== undefined && { routing: checked(() => parseRouting(entry.routing, `${at}.routing`)) }),
      ...(entry.affinityWaitMs !== undefined && { affinityWaitMs: checked(() => parseAffinityWaitMs(entry.affinityWaitMs, `${at}.affinityWaitMs`)) }),
    };
    checked(() => requirePool(pool, { warmup: `${at}.warmup`, routing: `${at}.routing`, affinityWaitMs: `${at}.affinityWaitMs` }, workers, where));
    return { id: id as string, staging, workers, threads, pool };
  });
  return { baseDomains, stagingDomains, pathPrefix, deployments };
}

function parsePrefix(raw: unknown, fail: (m: string) => never): string | false | undefined {
  if (raw === undefined || raw === false) return raw;
  if (typeof raw !== 'string') return fail(`pathPrefix must be false or a path such as /deployment, got ${JSON.stringify(raw)}`);
  try {
    return checkPathPrefix(raw) ?? false;
  } catch (err) {
    return fail((err as Error).message);
  }
}

/** Reads and checks the file `path` names (`from`: the flag or the variable). */
export function parseDeploymentsFile(
  path: string,
  from: string,
  options: { database: boolean; defaultWorkers: readonly string[] },
): DeploymentsCliOptions {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new CliUsageError(`${from}: cannot read ${path}${code === 'ENOENT' ? ': no such file' : `: ${(err as Error).message}`}.`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliUsageError(`${from} ${path} is not valid JSON: ${(err as Error).message}.`);
  }
  // A warm-up file is named relative to the deployments file, as a config file's paths usually are.
  return { file: path, ...parseDeployments(raw, `${from} ${path}`, { ...options, dir: dirname(path) }) };
}
