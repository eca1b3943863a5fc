// The upstream video provider: forwards a multi-frame task to a vendor that
// speaks this service's own video contract, through undici (a keep-alive
// pool, connect, headers and body timeouts):
//   POST {baseUrl}/multiframe      the request (callback_url left out: the
//                                  service keeps delivering its own) -> {task_id}
//   GET  {baseUrl}/tasks/{task_id} -> {state, output?: {url, content_type}}
// with `Authorization: Bearer <token>`. The vendor's states are relayed by
// polling; on success the video is streamed from its output URL into the
// asset store, never held whole. What the vendor says about a failure goes
// to the log only: 5xx, 429 and network failures are retryable errors,
// other refusals final ones, a failed vendor task a failed task with the
// generic message. The vendor and its output URLs are the operator's
// configuration, trusted: they do not go through the outbound guard.
import { type Dispatcher, request } from 'undici';
import { type ProviderTaskState, type VideoProvider, VideoProviderError, type VideoRequest } from '../video.ts';
import { excerpt, type UpstreamPoolOptions, upstreamPool } from './http.ts';

export interface UpstreamVideoOptions extends UpstreamPoolOptions {
  /** The vendor's video base, e.g. https://vendor.example/proxy/videogen. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  /** Between two state polls, ms. Default 2000. */
  pollIntervalMs?: number;
  /** Before retrying a failure that may pass (5xx, 429, timeouts), ms, doubling per try. Default 1000. */
  retryDelayMs?: number;
  /** Largest video accepted, bytes. Default 2 GiB. */
  maxVideoBytes?: number;
}

export interface UpstreamVideoProvider extends VideoProvider {
  /** Closes the pool it made (not a dispatcher it was given). */
  close(): Promise<void>;
}

const EXTENSIONS: Record<string, string> = { 'video/mp4': 'mp4', 'video/webm': 'webm', 'image/apng': 'apng', 'image/png': 'png', 'image/gif': 'gif' };
const MAX_JSON_BYTES = 4 * 1024 * 1024;

const retryable = (status: number) => status >= 500 || status === 429 || status === 408;

/** A whole (small) JSON body, bounded; the rest of an oversize body is not read. */
async function readJsonBody(body: Dispatcher.ResponseData['body']): Promise<unknown> {
  let text = '';
  for await (const chunk of body) {
    text += Buffer.from(chunk).toString('utf8');
    if (text.length > MAX_JSON_BYTES) {
      body.destroy();
      throw new VideoProviderError('video vendor answered an oversize JSON body', false);
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new VideoProviderError(`video vendor answered a body that is not JSON: ${text.slice(0, 200)}`, false);
  }
}

export function createUpstreamVideoProvider(opts: UpstreamVideoOptions): UpstreamVideoProvider {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const pool = upstreamPool(opts);
  const { dispatcher, headersTimeout, bodyTimeout } = pool;
  const maxVideoBytes = opts.maxVideoBytes ?? 2 * 1024 * 1024 * 1024;
  const auth = { authorization: `Bearer ${opts.token}` };

  /** One exchange; a failure to get an answer is a retryable VideoProviderError. */
  async function send(url: string, signal: AbortSignal, init: { method: 'GET' | 'POST'; body?: string; accept: string }) {
    try {
      return await request(url, {
        method: init.method,
        dispatcher,
        signal,
        headersTimeout,
        bodyTimeout,
        headers: { ...auth, accept: init.accept, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: init.body,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new VideoProviderError(`video vendor unreachable: ${err instanceof Error ? err.message : String(err)}`, true);
    }
  }

  async function refusal(what: string, res: Dispatcher.ResponseData): Promise<VideoProviderError> {
    return new VideoProviderError(`video vendor answered ${res.statusCode} to ${what}: ${await excerpt(res.body)}`, retryable(res.statusCode));
  }

  /** The video at the vendor's output URL, streamed and bounded. */
  async function download(output: { url?: unknown; content_type?: unknown }, signal: AbortSignal): Promise<ProviderTaskState> {
    if (typeof output.url !== 'string' || !/^https?:\/\//i.test(output.url))
      throw new VideoProviderError('video vendor reported success without an output URL', false);
    // The signed URL is the credential: the vendor's token is not sent to wherever it points.
    let res: Dispatcher.ResponseData;
    try {
      res = await request(output.url, { method: 'GET', dispatcher, signal, headersTimeout, bodyTimeout });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new VideoProviderError(`video vendor output unreachable: ${err instanceof Error ? err.message : String(err)}`, true);
    }
    if (res.statusCode !== 200) throw await refusal('the output download', res);
    const declared = Number(res.headers['content-length']);
    if (declared > maxVideoBytes) {
      res.body.destroy();
      throw new VideoProviderError(`video vendor output is ${declared} bytes, over the ${maxVideoBytes}-byte limit`, false);
    }
    const type = String(output.content_type ?? res.headers['content-type'] ?? 'application/octet-stream')
      .split(';')[0]
      .trim()
      .toLowerCase();
    const body = res.body;
    async function* chunks(): AsyncIterable<Uint8Array> {
      let size = 0;
      try {
        for await (const chunk of body) {
          size += chunk.length;
          if (size > maxVideoBytes) throw new VideoProviderError(`video vendor output is over the ${maxVideoBytes}-byte limit`, false);
          yield chunk as Uint8Array;
        }
      } finally {
        if (!body.readableEnded) body.destroy();
      }
    }
    return { state: 'success', video: { content_type: type, extension: EXTENSIONS[type] ?? 'bin', body: chunks() } };
  }

  return {
    name: 'upstream',
    pollIntervalMs: opts.pollIntervalMs ?? 2000,
    retryDelayMs: opts.retryDelayMs ?? 1000,
    async create(video: VideoRequest, signal) {
      const res = await send(`${base}/multiframe`, signal, { method: 'POST', body: JSON.stringify(video), accept: 'application/json' });
      if (res.statusCode !== 200 && res.statusCode !== 201) throw await refusal('the task creation', res);
      const json = (await readJsonBody(res.body)) as { task_id?: unknown } | null;
      if (typeof json?.task_id !== 'string' || json.task_id === '')
        throw new VideoProviderError('video vendor created a task without a task_id', false);
      return { id: json.task_id };
    },
    async status(id, signal) {
      const res = await send(`${base}/tasks/${encodeURIComponent(id)}`, signal, { method: 'GET', accept: 'application/json' });
      if (res.statusCode !== 200) throw await refusal('the task state', res);
      const json = (await readJsonBody(res.body)) as { state?: unknown; output?: unknown; error?: unknown } | null;
      switch (json?.state) {
        case 'created':
        case 'queueing':
          return { state: 'queueing' };
        case 'processing':
          return { state: 'processing' };
        case 'success':
          return download((json.output ?? {}) as { url?: unknown; content_type?: unknown }, signal);
        case 'failed':
          return { state: 'failed', reason: `the vendor's task failed: ${JSON.stringify(json.error ?? null).slice(0, 500)}` };
        default:
          throw new VideoProviderError(`video vendor reported an unknown state: ${JSON.stringify(json?.state ?? null)}`, false);
      }
    },
    close: pool.close,
  };
}
