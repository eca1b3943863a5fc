// How a pool of engine servers routes and warms up, for the flags (the
// deployment 'default': --warmup, --routing, --affinity-wait-ms) and for each
// deployment of a --deployments file (its "warmup", "routing",
// "affinityWaitMs"). They mean something only with engine servers: given
// without any, they are a usage mistake rather than silently unused.
import { readFileSync } from 'node:fs';
import type { Workflow } from '../../engine/types.ts';
import { isRecord } from '../../lib/is-record.ts';
import { CliUsageError } from './cli-errors.ts';
import { unwrap } from './client/workflow-file.ts';

export interface PoolCliOptions {
  /** An API-format workflow each engine server runs when it joins, before its first job (loads its models). */
  warmup?: Workflow;
  /** 'affinity' (default): to a free server holding the job's models; 'least-loaded': by load alone. */
  routing?: 'affinity' | 'least-loaded';
  /** With affinity, how long a job may wait for a busy server holding its models, ms (0 to 600000). */
  affinityWaitMs?: number;
}

/** The warm-up workflow file: an API-format graph, bare or in a {"prompt"} wrapper; every node with its class_type. */
export function readWarmup(path: string, from: string): Workflow {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : err instanceof SyntaxError ? `not JSON: ${err.message}` : (err as Error).message;
    throw new CliUsageError(`${from}: cannot read the warm-up workflow ${path}: ${why}.`);
  }
  const graph = isRecord(doc) ? unwrap(doc) : null;
  const nodes = graph === null ? [] : Object.entries(graph);
  const bad = nodes.find(([, node]) => !isRecord(node) || typeof node.class_type !== 'string' || !isRecord(node.inputs));
  if (graph === null || nodes.length === 0 || bad !== undefined) {
    const what = bad ? `its node "${bad[0]}" has no class_type and inputs` : 'it is no JSON object of nodes';
    throw new CliUsageError(`${from}: the warm-up workflow ${path} must be an API-format workflow: ${what}.`);
  }
  return graph as Workflow;
}

export function parseRouting(raw: unknown, from: string): PoolCliOptions['routing'] {
  if (raw === 'affinity' || raw === 'least-loaded') return raw;
  throw new CliUsageError(`${from} must be affinity or least-loaded, got ${JSON.stringify(raw)}.`);
}

export function parseAffinityWaitMs(raw: unknown, from: string): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(Number.isInteger(n) && n >= 0 && n <= 600_000)) {
    throw new CliUsageError(`${from} must be a whole number of milliseconds from 0 to 600000, got ${JSON.stringify(raw)}.`);
  }
  return n;
}

/** Refuses pool options where there is no pool: `names` are the options given, `where` whom they were given for. */
export function requirePool(pool: PoolCliOptions, names: Record<keyof PoolCliOptions, string>, workers: readonly string[], where: string): void {
  if (workers.length > 0) return;
  const given = (Object.keys(pool) as Array<keyof PoolCliOptions>).find((k) => pool[k] !== undefined);
  if (given !== undefined) throw new CliUsageError(`${names[given]} is for a pool of engine servers, and ${where} has no workers.`);
}
