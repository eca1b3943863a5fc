// The NDJSON line splitter of the upstream provider: lines cut anywhere by
// the network come out whole, in order, one at a time; blank lines and a
// trailing CR are dropped; an over-long line is refused without being held.
import { describe, expect, it } from 'vitest';
import { LineTooLongError, ndjsonLines } from '../providers/upstream/ndjson-lines.ts';

const enc = (s: string) => new TextEncoder().encode(s);
async function* chunks(...parts: Array<string | Uint8Array>) {
  for (const p of parts) yield typeof p === 'string' ? enc(p) : p;
}
const all = async (it: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const line of it) out.push(line);
  return out;
};

describe('ndjsonLines', () => {
  it('joins lines split across chunks and splits chunks holding several', async () => {
    expect(await all(ndjsonLines(chunks('{"a":', '1}\n{"b"', ':2}\n{"c":3}\n{"d":4}'), 100))).toEqual(['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']);
  });
  it('keeps multi-byte characters cut between chunks', async () => {
    const bytes = enc('{"t":"🎹é"}\n');
    expect(await all(ndjsonLines(chunks(bytes.subarray(0, 8), bytes.subarray(8, 9), bytes.subarray(9)), 100))).toEqual(['{"t":"🎹é"}']);
  });
  it('drops blank lines and CRLF endings', async () => {
    expect(await all(ndjsonLines(chunks('\n{"a":1}\r\n\r\n  \n{"b":2}\r\n'), 100))).toEqual(['{"a":1}', '{"b":2}']);
  });
  it('refuses a line longer than its cap, whether or not its newline came', async () => {
    await expect(all(ndjsonLines(chunks('x'.repeat(60), 'x'.repeat(60)), 100))).rejects.toBeInstanceOf(LineTooLongError);
    await expect(all(ndjsonLines(chunks(`${'x'.repeat(101)}\n`), 100))).rejects.toBeInstanceOf(LineTooLongError);
    expect(await all(ndjsonLines(chunks(`${'x'.repeat(100)}\n`), 100))).toEqual(['x'.repeat(100)]);
  });
  it('yields each line before the next chunk is read', async () => {
    const read: number[] = [];
    async function* tracked() {
      for (let i = 0; i < 3; i++) {
        read.push(i);
        yield enc(`{"n":${i}}\n`);
      }
    }
    const seen: string[] = [];
    for await (const line of ndjsonLines(tracked(), 100)) seen.push(`${line}@${read.length}`);
    expect(seen).toEqual(['{"n":0}@1', '{"n":1}@2', '{"n":2}@3']);
  });
});
