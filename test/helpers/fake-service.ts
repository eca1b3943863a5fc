// A hand-written Service for adapter tests: a fetch function and optional
// WebSocket hooks, so the Node adapter is tested without the core.
import { envelope } from '../../core/errors.ts';
import { refusalError } from '../../core/http/routes.ts';
import type { FetchOptions, Logger, Service, WebSocketHooks } from '../../core/types.ts';

/** Without surfaces, every refusal in the v2 envelope, as the core answers a path nobody mounts. */
export const fakeRefuse: Service['refuse'] = (status, message) => {
  const err = refusalError(status, message);
  return Response.json(envelope(err.code, err.message), { status: err.status });
};

export function fakeService(
  fetch: (request: Request, options?: FetchOptions) => Promise<Response> | Response,
  websocket: Partial<WebSocketHooks> = {},
): Service {
  return {
    fetch: async (request, options) => fetch(request, options),
    refuse: fakeRefuse,
    websocket: {
      upgrade: async () => new Response('no websockets here', { status: 404 }),
      open: () => {},
      message: () => {},
      close: () => {},
      ...websocket,
    },
    sweep: async () => ({ expired: 0, blobs_removed: 0, jobs_expired: 0, orphans_removed: 0 }),
    idle: async () => {},
    close: async () => {},
  };
}

/** A logger that remembers what it was told, so tests can assert on it without noise. */
export function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A promise with its resolve handle, for "this happened on the server" signals. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
