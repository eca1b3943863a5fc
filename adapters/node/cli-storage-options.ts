// The storage flags `graphrun serve` and `graphrun runner` share: --data (the
// embedded default: SQLite and blob files in one directory), --database (a
// PostgreSQL URL) and --blobs (an S3 bucket or a directory), each also from
// its GRAPHRUN_* variable. Only the parsing lives here; cli-storage.ts opens.
import { parseBlobsUrl, type S3BlobStoreOptions, s3OptionsFromEnv } from '../../storage/s3/options.ts';
import { CliUsageError } from './cli-errors.ts';

type Env = Record<string, string | undefined>;

export type BlobsCliOption =
  | { kind: 'dir'; dir: string }
  /** `env`: what the standard AWS variables gave (credentials always; region and endpoint when set). */
  | { kind: 's3'; bucket: string; prefix: string; env: Pick<S3BlobStoreOptions, 'credentials' | 'region' | 'endpoint'> };

export interface StorageCliOptions {
  /** Where SQLite (`graphrun.db`) and blob files (`blobs/`) live unless --database and --blobs say otherwise. */
  data: string;
  /** A postgres:// URL: metadata in PostgreSQL instead of SQLite under `data`. */
  database: string | undefined;
  /** Blobs in a bucket or a directory of their own instead of `blobs/` under `data`. */
  blobs: BlobsCliOption | undefined;
  /** The PostgreSQL schema of a deployment of --deployments (cli-deployments.ts); no flag sets it. Undefined: the connection's search_path. */
  schema?: string;
}

export const DEFAULT_DATA = './data';

/** `scheme://user:password@host` -> `scheme://user:***@host`: URLs end up in messages and logs, passwords must not. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:***@');
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
const ANY_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

function parseDatabase(value: string, from: string): string {
  // Only the scheme is checked: pg reads the rest, and forms URL parsing rejects (a socket path as ?host=) are valid to it.
  if (POSTGRES_URL.test(value)) return value;
  throw new CliUsageError(
    `${from} takes a postgres:// or postgresql:// URL, got "${redactUrl(value)}" (SQLite is the default: its file lives under --data).`,
  );
}

function parseBlobs(value: string, from: string, env: Env): BlobsCliOption {
  if (/^s3:/i.test(value)) {
    if (/^s3:\/\/(?:[/?#]|$)/i.test(value)) throw new CliUsageError(`${from} names no bucket: give s3://bucket/prefix, got "${value}".`);
    let place: { bucket: string; prefix: string };
    try {
      place = parseBlobsUrl(value);
    } catch (err) {
      throw new CliUsageError(`${from} must be s3://bucket/prefix or a directory: ${err instanceof Error ? err.message : String(err)}.`);
    }
    const s3 = s3OptionsFromEnv(env);
    // Checked here rather than at start: a missing variable is a mistake in how the command was run, like a bad flag.
    if (!s3.credentials) throw new CliUsageError(`${from} needs S3 credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.`);
    return { kind: 's3', ...place, env: s3 };
  }
  if (ANY_URL.test(value)) throw new CliUsageError(`${from} must be s3://bucket/prefix or a directory, got "${redactUrl(value)}".`);
  return { kind: 'dir', dir: value };
}

/** The storage flags over their variables over the default (SQLite and files under ./data). */
export function parseStorageOptions(values: { data?: string; database?: string; blobs?: string }, env: Env): StorageCliOptions {
  /** The flag's value, else the variable's (empty counts as unset, as for every GRAPHRUN_* variable), with the name to blame. */
  const given = (name: 'data' | 'database' | 'blobs', variable: string): [string, string] | undefined => {
    const value = values[name];
    if (value === '') throw new CliUsageError(`--${name} must not be empty.`);
    if (value !== undefined) return [value, `--${name}`];
    return env[variable] ? [env[variable], variable] : undefined;
  };
  const database = given('database', 'GRAPHRUN_DATABASE_URL');
  const blobs = given('blobs', 'GRAPHRUN_BLOBS_URL');
  return {
    data: given('data', 'GRAPHRUN_DATA')?.[0] ?? DEFAULT_DATA,
    database: database && parseDatabase(...database),
    blobs: blobs && parseBlobs(...blobs, env),
  };
}
