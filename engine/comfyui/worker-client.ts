// HTTP calls to one worker (an engine server speaking the reference's
// protocol), through undici. Each returns parsed data or throws: a
// WorkerUnreachable when the worker did not answer (in time), a
// WorkerHttpError for an unexpected status. Every call but the two file
// streams (upload, view) is bounded, so a worker hanging on one route is seen
// as down instead of holding its caller forever. Bodies of files stream;
// nothing is buffered whole.
import { Readable } from 'node:stream';
import { type Dispatcher, request } from 'undici';
import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';
import { parseJson, stringifyJson } from '../../lib/json.ts';
import type { NodeDefinition } from '../types.ts';
import { type MultipartFile, multipartBody } from './multipart-body.ts';

export class WorkerUnreachable extends Error {
  override name = 'WorkerUnreachable';
}

export class WorkerHttpError extends Error {
  override name = 'WorkerHttpError';
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: the worker answered ${status}${body ? `: ${body.slice(0, 500)}` : ''}`);
  }
}

/** Bounds of the calls that are not file streams. */
export interface WorkerTimeouts {
  /** GET /object_info: large on a server with many custom nodes. */
  objectInfoMs: number;
  /** POST /prompt: the worker validates the whole workflow first. */
  submitMs: number;
  /** /history, /queue, cancel, interrupt: small answers. */
  requestMs: number;
}

export const DEFAULT_TIMEOUTS: WorkerTimeouts = { objectInfoMs: 30_000, submitMs: 30_000, requestMs: 5000 };

export type SubmitResult =
  | { ok: true; prompt_id: string; node_errors: Record<string, unknown> }
  | { ok: false; status: number; body: Record<string, unknown> };

export interface WorkerClient {
  readonly url: string;
  systemStats(timeoutMs: number): Promise<Record<string, unknown>>;
  objectInfo(): Promise<Record<string, NodeDefinition>>;
  submit(payload: Record<string, unknown>): Promise<SubmitResult>;
  /** The history entry of a prompt, or null when the worker has none. */
  history(promptId: string): Promise<Record<string, unknown> | null>;
  /** Ids of the running and pending prompts. */
  queue(): Promise<{ running: string[]; pending: string[] }>;
  /** The per-job cancel; false when this worker does not have the endpoint. */
  cancelJob(promptId: string): Promise<boolean>;
  interrupt(promptId: string): Promise<void>;
  deleteQueued(promptId: string): Promise<void>;
  upload(file: MultipartFile, fields: Record<string, string>): Promise<{ name: string; subfolder: string; type: string }>;
  /** A file's bytes as they stream; `size` from Content-Length when the worker sent one. */
  view(ref: { filename: string; subfolder: string; type: string }, signal?: AbortSignal): Promise<ViewedFile>;
}

export interface ViewedFile {
  content_type: string | null;
  size: number | null;
  body: AsyncIterable<Uint8Array> & { destroy?: () => void };
}

type Options = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method?: Dispatcher.HttpMethod };

export function createWorkerClient(baseUrl: string, given?: HttpDispatcher, timeouts: WorkerTimeouts = DEFAULT_TIMEOUTS): WorkerClient {
  const url = baseUrl.replace(/\/+$/, '');
  const dispatcher = given as Dispatcher | undefined;

  /** A timeout is the worker not answering; an abort of the caller's own signal stays an abort. */
  const unreachable = (what: string, err: unknown, signal: AbortSignal | undefined) => {
    if (signal?.aborted && !(signal.reason instanceof Error && signal.reason.name === 'TimeoutError')) return err;
    return new WorkerUnreachable(`${what}: ${url} did not answer (${err instanceof Error ? err.message : String(err)})`);
  };

  async function call(path: string, what: string, opts: Options = {}) {
    try {
      return await request(`${url}${path}`, { method: 'GET', ...opts, ...(dispatcher ? { dispatcher } : {}) });
    } catch (err) {
      throw unreachable(what, err, opts.signal as AbortSignal | undefined);
    }
  }

  /**
   * A bounded call: the whole exchange, body included, within timeoutMs. Its
   * own timer, cleared once the answer is in: AbortSignal.timeout's cannot be,
   * so every call's would still fire long after (a TimeoutError, an abort
   * event), and it costs some 10 us more to make; a job makes three calls.
   */
  async function text(path: string, what: string, timeoutMs: number, opts: Options = {}): Promise<{ status: number; text: string }> {
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(new DOMException(`${what} took more than ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    (timer as { unref?: () => void }).unref?.();
    const { signal } = bound;
    try {
      const res = await call(path, what, { ...opts, signal });
      try {
        return { status: res.statusCode, text: await res.body.text() };
      } catch (err) {
        throw unreachable(what, err, signal);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  async function json(path: string, what: string, timeoutMs: number, opts: Options = {}): Promise<unknown> {
    const res = await text(path, what, timeoutMs, opts);
    if (res.status >= 300) throw new WorkerHttpError(res.status, res.text, what);
    try {
      return res.text ? parseJson(res.text) : null;
    } catch {
      throw new WorkerHttpError(res.status, res.text, `${what} (not JSON)`);
    }
  }

  const post = (body: unknown): Options => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: stringifyJson(body) });
  const short = timeouts.requestMs;
  const ids = (items: unknown): string[] => (Array.isArray(items) ? items.map((i) => (Array.isArray(i) ? String(i[1]) : '')).filter(Boolean) : []);

  return {
    url,
    systemStats: async (timeoutMs) => (await json('/system_stats', 'system_stats', timeoutMs)) as Record<string, unknown>,
    objectInfo: async () => (await json('/object_info', 'object_info', timeouts.objectInfoMs)) as Record<string, NodeDefinition>,
    async submit(payload) {
      const res = await text('/prompt', 'submit', timeouts.submitMs, post(payload));
      let body: Record<string, unknown> = {};
      try {
        body = res.text ? (parseJson(res.text) as Record<string, unknown>) : {};
      } catch {
        body = { error: { type: 'invalid_response', message: res.text.slice(0, 500) } };
      }
      if (res.status === 200)
        return { ok: true, prompt_id: String(body.prompt_id), node_errors: (body.node_errors ?? {}) as Record<string, unknown> };
      if (res.status >= 500) throw new WorkerHttpError(res.status, res.text, 'submit');
      return { ok: false, status: res.status, body };
    },
    async history(promptId) {
      const body = (await json(`/history/${encodeURIComponent(promptId)}`, 'history', short)) as Record<string, Record<string, unknown>> | null;
      return body?.[promptId] ?? null;
    },
    async queue() {
      const body = (await json('/queue', 'queue', short)) as { queue_running?: unknown; queue_pending?: unknown };
      return { running: ids(body?.queue_running), pending: ids(body?.queue_pending) };
    },
    async cancelJob(promptId) {
      const res = await text(`/api/jobs/${encodeURIComponent(promptId)}/cancel`, 'cancel', short, post({}));
      // Older workers have no such route; the caller falls back (harmless if it was only the job that was unknown).
      if (res.status === 404 || res.status === 405) return false;
      if (res.status >= 300) throw new WorkerHttpError(res.status, res.text, 'cancel');
      return true;
    },
    async interrupt(promptId) {
      await json('/interrupt', 'interrupt', short, post({ prompt_id: promptId }));
    },
    async deleteQueued(promptId) {
      await json('/queue', 'queue delete', short, post({ delete: [promptId] }));
    },
    async upload(file, fields) {
      const mp = multipartBody(fields, file);
      const headers: Record<string, string> = { 'content-type': mp.content_type };
      if (mp.length !== undefined) headers['content-length'] = String(mp.length);
      const res = await call('/upload/image', 'upload', { method: 'POST', headers, body: Readable.from(mp.body, { objectMode: false }) });
      const answer = await res.body.text().catch((err) => {
        throw unreachable('upload', err, undefined);
      });
      if (res.statusCode >= 300) throw new WorkerHttpError(res.statusCode, answer, 'upload');
      let body: Record<string, unknown> | null = null;
      try {
        body = parseJson(answer) as Record<string, unknown> | null;
      } catch {
        // checked below
      }
      if (typeof body?.name !== 'string') throw new WorkerHttpError(res.statusCode, answer, 'upload (no file name in the answer)');
      return {
        name: body.name,
        subfolder: typeof body.subfolder === 'string' ? body.subfolder : '',
        type: typeof body.type === 'string' ? body.type : 'input',
      };
    },
    async view(ref, signal) {
      const q = new URLSearchParams({ filename: ref.filename, subfolder: ref.subfolder, type: ref.type });
      const res = await call(`/view?${q}`, 'view', signal ? { signal } : {});
      if (res.statusCode !== 200) throw new WorkerHttpError(res.statusCode, await res.body.text().catch(() => ''), `view ${ref.filename}`);
      const ct = res.headers['content-type'];
      const length = Number(res.headers['content-length']);
      return { content_type: typeof ct === 'string' ? ct : null, size: Number.isSafeInteger(length) && length >= 0 ? length : null, body: res.body };
    },
  };
}
