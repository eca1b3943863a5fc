// Value parsers several option modules share (the flags, and the
// deployments file that names workers and threads per deployment), apart
// so neither imports the other.
import { CliUsageError } from './cli-errors.ts';

/** A base URL: http(s) with a host, no query or fragment; a trailing slash is dropped. */
export function parseBaseUrl(value: string, from: string, example: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname || url.search || url.hash) {
    throw new CliUsageError(`${from} must be an http(s) URL such as ${example}, got "${value}".`);
  }
  return value.replace(/\/+$/, '');
}

/** A count of threads: a whole number from 1 to 256. */
export function parseThreads(raw: string, from: string): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 256)) throw new CliUsageError(`${from} must be a whole number from 1 to 256, got "${raw}".`);
  return n;
}

/** Worker base URLs. */
export function parseWorkers(raw: string[], from: string): string[] {
  return raw.map((value) => parseBaseUrl(value, from, 'http://host:8188'));
}
