// A stand-in for the parts of the Lambda Node.js runtime that response
// streaming uses, behaving as AWS documents and implements them:
// `awslambda.streamifyResponse` marks the handler; `HttpResponseStream.from`
// sets the integration content type and, just before the first write, sends
// the metadata prelude (JSON) and 8 NUL bytes; the response stream is a real
// Writable whose bytes a test reads back as the integration would.
import { Writable } from 'node:stream';
import type { LambdaStreamingRuntime } from '../../adapters/lambda/index.ts';
import type { Harness } from './harness.ts';
import { eventHarness, type FixtureKind, headersOf, testContext } from './lambda-events.ts';

export const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
export const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const DELIMITER = 8;

type WriteHook = (write: (chunk: string | Uint8Array) => void) => void;

export class FakeResponseStream extends Writable {
  contentType = 'application/octet-stream';
  _onBeforeFirstWrite: WriteHook | undefined;
  /** Every byte written, as the integration receives it. */
  readonly output: ReadableStream<Uint8Array>;
  #started = false;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #resume: (() => void) | undefined;

  constructor() {
    super({ highWaterMark: 16 * 1024 });
    this.output = new ReadableStream<Uint8Array>(
      {
        start: (c) => void (this.#controller = c),
        pull: () => this.#wake(),
        cancel: () => void this.destroy(),
      },
      { highWaterMark: 64 * 1024, size: (c) => c.byteLength },
    );
  }

  #wake() {
    const resume = this.#resume;
    this.#resume = undefined;
    resume?.();
  }

  setContentType(type: string): void {
    if (this.#started) throw new Error('Cannot set content-type, too late.');
    this.contentType = type;
  }

  override write(chunk: any, encoding?: any, callback?: any): boolean {
    // As the runtime's stream: the hook runs once, right before the first write.
    if (!this.#started && typeof this._onBeforeFirstWrite === 'function') this._onBeforeFirstWrite((c) => super.write(c));
    this.#started = true;
    return super.write(chunk, encoding, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    try {
      this.#controller.enqueue(new Uint8Array(chunk));
    } catch {
      callback();
      return;
    }
    // The reader is behind: hold the write, so the writer sees backpressure.
    if ((this.#controller.desiredSize ?? 1) > 0) callback();
    else this.#resume = () => callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    try {
      this.#controller.close();
    } catch {
      // The reader already left.
    }
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    try {
      if (error) this.#controller.error(error);
      else this.#controller.close();
    } catch {
      // Already closed.
    }
    this.#wake();
    callback(error);
  }
}

export function installFakeRuntime(): LambdaStreamingRuntime {
  const runtime = {
    streamifyResponse<F>(handler: F): F {
      (handler as Record<symbol, unknown>)[STREAMING] = 'response';
      return handler;
    },
    HttpResponseStream: {
      from(stream: FakeResponseStream, prelude: Record<string, unknown>) {
        stream.setContentType(PRELUDE_CONTENT_TYPE);
        const metadata = JSON.stringify(prelude);
        stream._onBeforeFirstWrite = (write) => {
          write(metadata);
          write(new Uint8Array(DELIMITER));
        };
        return stream;
      },
    },
  };
  (globalThis as { awslambda?: unknown }).awslambda = runtime;
  return runtime as unknown as LambdaStreamingRuntime;
}

export function removeFakeRuntime(): void {
  delete (globalThis as { awslambda?: unknown }).awslambda;
}

/** Splits what the function streamed into its metadata prelude and the body that follows. */
export async function readPrelude(output: ReadableStream<Uint8Array>): Promise<{ prelude: any; raw: Uint8Array; body: ReadableStream<Uint8Array> }> {
  const reader = output.getReader();
  let seen = new Uint8Array(0);
  for (;;) {
    const at = findDelimiter(seen);
    if (at >= 0) {
      const prelude = JSON.parse(new TextDecoder().decode(seen.subarray(0, at)));
      const rest = seen.subarray(at + DELIMITER);
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          if (rest.byteLength > 0) c.enqueue(rest);
        },
        async pull(c) {
          const { done, value } = await reader.read();
          if (done) c.close();
          else c.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return { prelude, raw: seen.slice(0, at + DELIMITER), body };
    }
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended without a metadata prelude (${seen.byteLength} bytes)`);
    const next = new Uint8Array(seen.byteLength + value.byteLength);
    next.set(seen);
    next.set(value, seen.byteLength);
    seen = next;
  }
}

function findDelimiter(bytes: Uint8Array): number {
  let run = 0;
  for (let i = 0; i < bytes.length; i++) {
    run = bytes[i] === 0 ? run + 1 : 0;
    if (run === DELIMITER) return i - DELIMITER + 1;
  }
  return -1;
}

export type StreamHandler = (event: unknown, stream: FakeResponseStream, context?: any) => Promise<void>;

export interface StreamedCall {
  response: Response;
  prelude: any;
  stream: FakeResponseStream;
  /** The handler's own promise: resolves once it has ended the stream (and waited for background work). */
  done: Promise<void>;
}

/** Invokes the streaming handler for an event and reads the answer as the integration does. */
export async function invokeStreaming(kind: FixtureKind, handler: StreamHandler, event: unknown, context = testContext()): Promise<StreamedCall> {
  const stream = new FakeResponseStream();
  const done = handler(event, stream, context);
  const failed = done.then(
    () => new Promise<never>(() => {}),
    (err) => Promise.reject(err),
  );
  // Reported through `done` to whoever awaits it; not an unhandled rejection here.
  failed.catch(() => {});
  const { prelude, body } = await Promise.race([readPrelude(stream.output), failed]);
  const status = prelude.statusCode;
  const response = new Response([101, 204, 205, 304].includes(status) ? null : body, {
    status,
    headers: headersOf(kind, { ...prelude, body: '', isBase64Encoded: false }),
  });
  return { response, prelude, stream, done };
}

/** A Harness whose requests go through the integration and the streaming handler. */
export function streamingHarness(kind: FixtureKind, handler: StreamHandler, service: Harness['service'], calls: StreamedCall[] = []): Harness {
  return eventHarness(`lambda-stream:${kind}`, kind, service, async (event) => {
    const streamed = await invokeStreaming(kind, handler, event);
    calls.push(streamed);
    return streamed.response;
  });
}
