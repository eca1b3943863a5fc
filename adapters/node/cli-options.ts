// Command-line parsing for `graphrun`, apart from the CLI so it can be tested:
// flags win over GRAPHRUN_* environment variables, which win over defaults.
import { parseArgs } from 'node:util';

export interface ServeCliOptions {
  host: string;
  port: number;
  data: string;
  token: string | undefined;
  /** Outbound requests (LoadImageFromURL, video key frames, callbacks) may reach private, loopback and link-local addresses. */
  allowPrivateUrls: boolean;
  /** Worker base URLs: jobs run on these engine servers instead of in process. */
  workers: string[];
  /** Worker threads of the built-in engine; undefined: one per core. */
  threads: number | undefined;
  /** Vendor endpoints the generation routes forward to instead of generating locally. */
  musicUpstream: Upstream | undefined;
  videoUpstream: Upstream | undefined;
}

export interface Upstream {
  baseUrl: string;
  token: string;
}

export type CliCommand = { command: 'help' } | { command: 'serve'; options: ServeCliOptions };

/** A mistake in the command line: the CLI prints the message and exits 2. */
export class CliUsageError extends Error {
  override name = 'CliUsageError';
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8189;
export const DEFAULT_DATA = './data';

export const USAGE = `Usage: graphrun serve [options]

Runs the workflow execution service over HTTP and WebSocket.

Options:
  --host <address>  Interface to listen on (env GRAPHRUN_HOST, default ${DEFAULT_HOST})
  --port <number>   Port, 0 for any free one (env GRAPHRUN_PORT, default ${DEFAULT_PORT})
  --data <dir>      Directory for the database and blobs (env GRAPHRUN_DATA, default ${DEFAULT_DATA})
  --token <secret>  Require "Authorization: Bearer <secret>" (env GRAPHRUN_TOKEN;
                    prefer the variable: flags are visible to other local users)
  --allow-private-urls
                    Let outbound requests (LoadImageFromURL, video key frames by URL,
                    video callbacks) reach private, loopback and link-local addresses
                    (env GRAPHRUN_ALLOW_PRIVATE_URLS=1 or true; default off: only for
                    trusted users, it opens the local network to them)
  --worker <url>    Run jobs on an engine server (ComfyUI protocol) instead of in
                    process; repeat for a pool (env GRAPHRUN_WORKERS, comma-separated)
  --threads <n>     Worker threads the built-in engine computes on, one job each
                    (env GRAPHRUN_THREADS, default one per core)
  --music-upstream <url>
                    Forward /proxy/musicgen to this vendor base (env GRAPHRUN_MUSIC_UPSTREAM_URL)
                    with the token in GRAPHRUN_MUSIC_UPSTREAM_TOKEN; default: local synthesis
  --video-upstream <url>
                    Forward /proxy/videogen to this vendor base (env GRAPHRUN_VIDEO_UPSTREAM_URL)
                    with the token in GRAPHRUN_VIDEO_UPSTREAM_TOKEN; default: local rendering
  -h, --help        Show this help
`;

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

/** A base URL: http(s) with a host, no query or fragment; a trailing slash is dropped. */
function parseBaseUrl(value: string, from: string, example: string): string {
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
function parseThreads(raw: string, from: string): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 256)) throw new CliUsageError(`${from} must be a whole number from 1 to 256, got "${raw}".`);
  return n;
}

/** Worker base URLs. */
function parseWorkers(raw: string[], from: string): string[] {
  return raw.map((value) => parseBaseUrl(value, from, 'http://host:8188'));
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

/** A yes/no variable: 1 or true is on; 0, false or empty is off; anything else is a mistake. */
function parseSwitch(raw: string | undefined, from: string): boolean {
  if (raw === undefined) return false;
  const value = raw.toLowerCase();
  if (value === '1' || value === 'true') return true;
  if (value === '' || value === '0' || value === 'false') return false;
  throw new CliUsageError(`${from} must be 1, true, 0 or false, got "${raw}".`);
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
        token: { type: 'string' },
        'allow-private-urls': { type: 'boolean' },
        worker: { type: 'string', multiple: true },
        threads: { type: 'string' },
        'music-upstream': { type: 'string' },
        'video-upstream': { type: 'string' },
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
  if (command !== 'serve') throw new CliUsageError(`Unknown command "${command}".`);
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument "${extra[0]}".`);

  // An empty variable counts as unset: `GRAPHRUN_PORT= graphrun serve` is a common way to clear one.
  const fromEnv = (name: string) => env[name] || undefined;
  const port = values.port ?? fromEnv('GRAPHRUN_PORT');
  const threads = values.threads ?? fromEnv('GRAPHRUN_THREADS');
  const workers = values.worker
    ? parseWorkers(values.worker, '--worker')
    : parseWorkers(
        (fromEnv('GRAPHRUN_WORKERS') ?? '')
          .split(',')
          .map((w) => w.trim())
          .filter(Boolean),
        'GRAPHRUN_WORKERS',
      );
  return {
    command: 'serve',
    options: {
      host: nonEmpty(values.host, '--host') ?? fromEnv('GRAPHRUN_HOST') ?? DEFAULT_HOST,
      port: port === undefined ? DEFAULT_PORT : parsePort(port, values.port !== undefined ? '--port' : 'GRAPHRUN_PORT'),
      data: nonEmpty(values.data, '--data') ?? fromEnv('GRAPHRUN_DATA') ?? DEFAULT_DATA,
      token: nonEmpty(values.token, '--token') ?? fromEnv('GRAPHRUN_TOKEN'),
      allowPrivateUrls: values['allow-private-urls'] === true || parseSwitch(env.GRAPHRUN_ALLOW_PRIVATE_URLS, 'GRAPHRUN_ALLOW_PRIVATE_URLS'),
      workers,
      threads: threads === undefined ? undefined : parseThreads(threads, values.threads !== undefined ? '--threads' : 'GRAPHRUN_THREADS'),
      musicUpstream: parseUpstream(values['music-upstream'], env, 'music'),
      videoUpstream: parseUpstream(values['video-upstream'], env, 'video'),
    },
  };
}
