// core/http/json-stream.ts: a JSON body pulled piece by piece as the client
// reads it, stopped when the client leaves, and cut short (logged, stream
// errored) when producing fails after the answer began.
import { describe, expect, it } from 'vitest';
import { jsonStream } from '../core/http/json-stream.ts';
import type { Logger } from '../core/types.ts';

function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info() {}, warn() {}, error: (message) => void errors.push(message) };
}

describe('jsonStream', () => {
  it('produces a piece only when the reader asks for one, skipping empty pieces', async () => {
    const made: string[] = [];
    async function* pieces() {
      for (const p of ['[', '', '1', ',2', ']']) {
        made.push(p);
        yield p;
      }
    }
    const res = jsonStream(pieces(), { headers: { 'Cache-Control': 'no-store' } }, recordingLogger());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    await new Promise((r) => setTimeout(r, 10));
    expect(made).toEqual([]);
    const reader = res.body!.getReader();
    const text = (chunk: { value?: Uint8Array }) => new TextDecoder().decode(chunk.value);
    expect(text(await reader.read())).toBe('[');
    expect(made).toEqual(['[']);
    expect(text(await reader.read())).toBe('1');
    expect(made).toEqual(['[', '', '1']);
    expect(text(await reader.read())).toBe(',2');
    expect(text(await reader.read())).toBe(']');
    expect((await reader.read()).done).toBe(true);
  });

  it('stops the producer when the reader cancels', async () => {
    let finished = false;
    let produced = 0;
    async function* pieces() {
      try {
        for (;;) {
          produced++;
          yield 'x';
        }
      } finally {
        finished = true;
      }
    }
    const reader = jsonStream(pieces(), {}, recordingLogger()).body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(finished).toBe(true);
    expect(produced).toBe(2);
  });

  it('a failure after the first piece errors the stream and is logged', async () => {
    async function* pieces() {
      yield '{"a":';
      throw new Error('storage went away');
    }
    const logger = recordingLogger();
    const res = jsonStream(pieces(), {}, logger);
    await expect(res.text()).rejects.toThrow('storage went away');
    expect(logger.errors).toHaveLength(1);
  });
});
