// The streaming handler, for Lambda response streaming (a function URL with
// invoke mode RESPONSE_STREAM, or an API Gateway REST integration with
// response transfer mode STREAM): the runtime's `awslambda.streamifyResponse`
// wraps it, `awslambda.HttpResponseStream.from` sends status, headers and
// cookies as the metadata prelude, then the body goes out chunk by chunk as
// the service produces it, so SSE and NDJSON arrive live and large downloads
// are not held in memory.

import { consoleLogger } from '../../core/log.ts';
import { knownBody } from '../node/known-body.ts';
import { deadlineSignal } from './deadline.ts';
import { errorFields } from './errors.ts';
import { invoke, type LambdaOptions } from './invoke.ts';
import { headOf, resultHead } from './result.ts';
import type { FetchService, LambdaContextLike } from './types.ts';

/** The runtime's response stream, as much of it as is used here (a Node Writable in practice). */
export interface LambdaResponseStream {
  write(chunk: string | Uint8Array): boolean;
  end(callback?: () => void): unknown;
  on(event: 'drain' | 'close' | 'error', listener: (...args: unknown[]) => void): unknown;
  off?(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly destroyed?: boolean;
  readonly writableEnded?: boolean;
}

/** The `awslambda` global the Node.js runtime provides. */
export interface LambdaStreamingRuntime {
  streamifyResponse<F>(handler: F): F;
  HttpResponseStream: { from(stream: LambdaResponseStream, prelude: Record<string, unknown>): LambdaResponseStream };
}

export type LambdaStreamHandlerOptions = LambdaOptions;

export type LambdaStreamHandler = (event: unknown, responseStream: LambdaResponseStream, context?: LambdaContextLike) => Promise<void>;

const runtime = () => (globalThis as { awslambda?: LambdaStreamingRuntime }).awslambda;

/** Resolves when the stream can take more, or is gone (so a writer never hangs). */
function drained(stream: LambdaResponseStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ['drain', 'close', 'error']) stream.off?.(event, done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error'] as const) stream.on(event, done);
  });
}

async function writeBody(stream: LambdaResponseStream, response: Response, head: boolean, gone: AbortSignal): Promise<void> {
  let wrote = false;
  const write = async (chunk: string | Uint8Array) => {
    if (gone.aborted || stream.destroyed) return;
    wrote = true;
    if (!stream.write(chunk)) await drained(stream);
  };
  const known = knownBody(response);
  const bodyless = head || response.status === 204 || response.status === 304;
  if (bodyless || known !== undefined || !response.body) {
    if (known === undefined) await response.body?.cancel().catch(() => {});
    if (!bodyless && known) await write(known);
  } else {
    const reader = response.body.getReader();
    const cancel = () => void reader.cancel().catch(() => {});
    gone.addEventListener('abort', cancel, { once: true });
    try {
      for (let chunk = await reader.read(); !chunk.done && !gone.aborted; chunk = await reader.read()) await write(chunk.value);
    } finally {
      gone.removeEventListener('abort', cancel);
    }
  }
  if (gone.aborted || stream.destroyed) return;
  // The runtime sends the prelude just before the first write: an empty body still needs one.
  if (!wrote) stream.write(new Uint8Array(0));
  await new Promise<void>((resolve) => stream.end(() => resolve()));
}

/** Wrapped with `awslambda.streamifyResponse` when the runtime is there; the bare handler otherwise. */
export function createLambdaStreamHandler(service: FetchService, opts: LambdaStreamHandlerOptions = {}): LambdaStreamHandler {
  const logger = opts.logger ?? consoleLogger;
  const handle: LambdaStreamHandler = async (event, responseStream, context) => {
    const lambda = runtime();
    if (!lambda) throw new Error('The streaming handler needs the awslambda global of the Lambda Node.js runtime.');
    const deadline = deadlineSignal(context, opts);
    // The client went away: the service's stream (SSE) is released at once.
    const gone = new AbortController();
    const onGone = () => gone.abort();
    responseStream.on('close', onGone);
    responseStream.on('error', onGone);
    const signal = AbortSignal.any([deadline.signal, gone.signal]);
    try {
      const { kind, head, response } = await invoke(service, event, signal, logger, opts.basePath);
      const stream = lambda.HttpResponseStream.from(responseStream, resultHead(headOf(response), kind, logger));
      await writeBody(stream, response, head, gone.signal);
    } catch (err) {
      // The head is out: only the runtime's own error report can tell the client the body is cut short.
      logger.error('lambda adapter: streaming the response failed', errorFields(err));
      throw err;
    } finally {
      deadline.clear();
      responseStream.off?.('close', onGone);
      responseStream.off?.('error', onGone);
    }
    // The client has the whole answer; background work (scans) finishes while the invocation is still live.
    await service.idle?.();
  };
  return runtime()?.streamifyResponse(handle) ?? handle;
}
