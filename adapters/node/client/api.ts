// The client's HTTP calls to a v2 server: the bearer token on every request,
// paths joined to the base URL (which may carry a mount prefix), links the
// server hands out resolved the way the contract says (a host-relative link
// against the origin, never the base), and failures turned into errors the
// CLI can print: the server's error envelope, or a clear word when it
// cannot be reached at all.
import { ApiError, apiErrorOf, ClientError } from './errors.ts';

export interface ClientConfig {
  /** Where the server answers, mount prefix included, without a trailing slash. */
  baseUrl: string;
  token: string | undefined;
}

export interface Api {
  readonly baseUrl: string;
  /** A link from a response (`job.urls.events`), resolved against the server. */
  link(href: string): URL;
  /** The response whatever its status; rejects only when the server cannot be reached (or `init.signal` aborts). */
  fetch(target: string | URL, init?: RequestInit): Promise<Response>;
  /** The JSON body of a 2xx answer; rejects with ApiError otherwise. */
  json<T>(target: string | URL, init?: RequestInit): Promise<T>;
}

/** Why a request never got an answer, from the error fetch rejects with. */
function unreachable(err: unknown, baseUrl: string): ClientError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused: is the server running there? Pass --url or set GRAPHRUN_URL'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host not found'
        : (cause?.message ?? (err instanceof Error ? err.message : String(err)));
  return new ClientError(`cannot reach ${baseUrl}: ${why}`);
}

export const isAbort = (err: unknown): boolean => err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');

export function createApi(config: ClientConfig): Api {
  const { baseUrl, token } = config;
  const resolve = (target: string | URL) => (typeof target === 'string' ? new URL(baseUrl + target) : target);
  const api: Api = {
    baseUrl,
    link: (href) => new URL(href, `${baseUrl}/`),
    async fetch(target, init = {}) {
      const headers = new Headers(init.headers);
      if (token !== undefined && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      try {
        return await fetch(resolve(target), { ...init, headers });
      } catch (err) {
        if (isAbort(err)) throw err;
        throw unreachable(err, baseUrl);
      }
    },
    async json<T>(target: string | URL, init: RequestInit = {}) {
      const url = resolve(target);
      const res = await api.fetch(url, init);
      if (!res.ok) throw await apiErrorOf(res, `${init.method ?? 'GET'} ${url.pathname}`);
      try {
        return (await res.json()) as T;
      } catch {
        throw new ApiError(res.status, 'bad_response', `${init.method ?? 'GET'} ${url.pathname} answered ${res.status} without a JSON body`, null);
      }
    },
  };
  return api;
}
