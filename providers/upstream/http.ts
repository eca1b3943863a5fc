// What the upstream providers (music, video) share of talking to a vendor
// through undici: their own keep-alive pool with connect, headers and body
// timeouts unless given one, and a short excerpt of a refusal for the log.
import { Agent, type Dispatcher } from 'undici';
import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';

export interface UpstreamPoolOptions {
  /** Connecting, ms. Default 10000. */
  connectTimeoutMs?: number;
  /** From the request sent to the response's headers, ms. Default 30000. */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks, ms. Default 60000. */
  bodyTimeoutMs?: number;
  /** Connection pool; default one of its own (closed by close()). */
  dispatcher?: HttpDispatcher;
}

export interface UpstreamPool {
  dispatcher: Dispatcher;
  headersTimeout: number;
  bodyTimeout: number;
  /**
   * Closes the pool it made (not a dispatcher it was given). Safe to call
   * again: the service closes the providers it was given, and their owner may too.
   */
  close(): Promise<void>;
}

export function upstreamPool(opts: UpstreamPoolOptions): UpstreamPool {
  const headersTimeout = opts.headersTimeoutMs ?? 30_000;
  const bodyTimeout = opts.bodyTimeoutMs ?? 60_000;
  const own = opts.dispatcher
    ? undefined
    : new Agent({ connect: { timeout: opts.connectTimeoutMs ?? 10_000 }, headersTimeout, bodyTimeout, keepAliveTimeout: 30_000 });
  let closing: Promise<void> | undefined;
  return {
    dispatcher: (opts.dispatcher as Dispatcher | undefined) ?? own!,
    headersTimeout,
    bodyTimeout,
    close: () => (closing ??= own ? own.close() : Promise.resolve()),
  };
}

/** A little of a refusal's body, for the log; the rest is discarded. */
export async function excerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += Buffer.from(chunk).toString('utf8');
      if (text.length >= 512) break;
    }
  } catch {
    // A refusal whose body breaks off says no less.
  }
  body.destroy();
  return text.slice(0, 512);
}
