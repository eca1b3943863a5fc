// Where the client commands send their requests: --url and --token, else
// GRAPHRUN_URL and GRAPHRUN_TOKEN (the same variable `graphrun serve` takes
// its token from, so one environment runs both), else the address `serve`
// listens on by default.
import { DEFAULT_HOST, DEFAULT_PORT } from '../cli-usage.ts';
import type { ClientConfig } from './api.ts';
import { CliUsageError } from './errors.ts';

export const DEFAULT_URL = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;

export interface ConnectionFlags {
  url?: string;
  token?: string;
}

type Env = Record<string, string | undefined>;

export function clientConfig(flags: ConnectionFlags, env: Env): ClientConfig {
  // An empty variable counts as unset, as for serve.
  const raw = flags.url ?? (env.GRAPHRUN_URL || DEFAULT_URL);
  const from = flags.url !== undefined ? '--url' : 'GRAPHRUN_URL';
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new CliUsageError(`${from} must be an http(s) URL such as ${DEFAULT_URL}, got "${raw}".`);
  }
  if (flags.token === '') throw new CliUsageError('--token must not be empty.');
  return { baseUrl: raw.replace(/\/+$/, ''), token: flags.token ?? (env.GRAPHRUN_TOKEN || undefined) };
}
