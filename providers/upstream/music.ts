// The upstream music provider: forwards a generation to a vendor speaking
// this service's own contract (POST {baseUrl}/t2m/generate, multipart
// `prompt` and `duration`, Bearer token, NDJSON back) through undici, with a
// keep-alive pool and connect, headers and idle-body timeouts. Events are
// passed on line by line as they arrive. What the vendor says about a
// failure is logged by the endpoint, never shown: a refusal before the
// stream is a MusicProviderError (a 429 stays a 429, anything else a 502),
// a broken or malformed stream after it a terminal error event.
import { type Dispatcher, request } from 'undici';
import { isRecord } from '../../lib/is-record.ts';
import { type MusicProvider, MusicProviderError, type MusicRequest } from '../music.ts';
import { excerpt, type UpstreamPoolOptions, upstreamPool } from './http.ts';
import { LineTooLongError, ndjsonLines } from './ndjson-lines.ts';

export interface UpstreamMusicOptions extends UpstreamPoolOptions {
  /** The vendor's music base, e.g. https://vendor.example/proxy/musicgen; `/t2m/generate` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  /** Longest accepted event line, bytes. Default 8 MiB. */
  maxLineBytes?: number;
}

export interface UpstreamMusicProvider extends MusicProvider {
  /** Closes the pool it made (not a dispatcher it was given). */
  close(): Promise<void>;
}

const upstreamError = (message: string) => new MusicProviderError('upstream', message);

function multipartBody(fields: Record<string, string>): { boundary: string; body: string } {
  const boundary = `----graphrun-${crypto.randomUUID()}`;
  let body = '';
  for (const [name, value] of Object.entries(fields)) {
    body += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  return { boundary, body: `${body}--${boundary}--\r\n` };
}

export function createUpstreamMusicProvider(opts: UpstreamMusicOptions): UpstreamMusicProvider {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/t2m/generate`;
  const pool = upstreamPool(opts);
  const { dispatcher, headersTimeout, bodyTimeout } = pool;
  const maxLineBytes = opts.maxLineBytes ?? 8 * 1024 * 1024;

  async function* generate(req: MusicRequest, signal: AbortSignal): AsyncGenerator<{ type: string }> {
    const { boundary, body } = multipartBody({ prompt: req.prompt, duration: String(req.duration) });
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher,
        signal,
        headersTimeout,
        bodyTimeout,
        headers: {
          authorization: `Bearer ${opts.token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          accept: 'application/x-ndjson',
        },
        body,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw upstreamError(`music vendor unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
    const { statusCode, headers } = response;
    if (statusCode !== 200) {
      const said = await excerpt(response.body);
      if (statusCode === 429) {
        const retry = Number(headers['retry-after']);
        throw new MusicProviderError('rate_limited', `music vendor answered 429: ${said}`, Number.isInteger(retry) && retry >= 0 ? retry : undefined);
      }
      throw upstreamError(`music vendor answered ${statusCode}: ${said}`);
    }
    const type = String(headers['content-type'] ?? '');
    if (!/^application\/(x-)?ndjson\b/i.test(type)) {
      const said = await excerpt(response.body);
      throw upstreamError(`music vendor answered ${type || 'no content type'}, not NDJSON: ${said}`);
    }

    let completed = false;
    try {
      for await (const line of ndjsonLines(response.body, maxLineBytes)) {
        let event: unknown;
        try {
          event = JSON.parse(line);
        } catch {
          throw upstreamError(`music vendor sent a line that is not JSON: ${line.slice(0, 200)}`);
        }
        if (!isRecord(event) || typeof event.type !== 'string') {
          throw upstreamError(`music vendor sent an event without a type: ${line.slice(0, 200)}`);
        }
        const typed = event as { type: string; message?: unknown };
        if (typed.type === 'error') throw upstreamError(`music vendor reported an error: ${String(typed.message ?? '')}`);
        if (typed.type === 'complete') completed = true;
        yield typed;
      }
    } catch (err) {
      if (signal.aborted || err instanceof MusicProviderError) throw err;
      if (err instanceof LineTooLongError) throw upstreamError(`music vendor stream: ${err.message}`);
      throw upstreamError(`music vendor stream broke: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      // Left early (the client went away) or failed: the connection is dropped, not drained.
      if (!completed || !response.body.readableEnded) response.body.destroy();
    }
    if (!completed) throw upstreamError('music vendor stream ended without a completion event');
  }

  return {
    name: 'upstream',
    generate,
    close: pool.close,
  };
}
