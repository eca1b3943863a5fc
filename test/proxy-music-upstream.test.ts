// Upstream mode against a fake vendor (a real HTTP server): the vendor's
// stream passed through line by line, its refusals mapped to the documented
// bodies in generic words, a stream that breaks ended with a terminal error
// event, connections reused, timeouts honoured, a slow stream delivered as
// it comes, and a client that leaves hanging up on the vendor too.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLocalMusicProvider } from '../providers/local/music/provider.ts';
import { createUpstreamMusicProvider, type UpstreamMusicProvider } from '../providers/upstream/music.ts';
import { type FakeMusicVendor, startFakeMusicVendor, VENDOR_SECRET } from './fakes/vendor-music.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { sleep, until } from './helpers/jobs.ts';
import { expectMusicError, expectWav, generate, ndjsonEvents, readMusic, walkAway } from './helpers/music.ts';

/** What the local provider makes of a prompt, assembled: upstream must deliver the same file. */
async function localWav(prompt: string, duration: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const e of createLocalMusicProvider().generate({ prompt, duration }, new AbortController().signal)) {
    if (e.type === 'audio_chunk') parts.push(Buffer.from((e as { data: string }).data, 'base64'));
  }
  return Buffer.concat(parts);
}

describe.each(MODES)('upstream music provider (%s)', (mode) => {
  let vendor: FakeMusicVendor;
  let provider: UpstreamMusicProvider;
  let h: Harness;
  const logged: string[] = [];
  beforeAll(async () => {
    vendor = await startFakeMusicVendor('vendor-token-1');
    provider = createUpstreamMusicProvider({ baseUrl: `${vendor.url}/`, token: vendor.token, headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 });
    const logger = { info() {}, warn() {}, error: (m: string, f?: Record<string, unknown>) => void logged.push(`${m} ${JSON.stringify(f)}`) };
    h = await startHarness(mode, { providers: { music: provider }, logger });
  });
  afterAll(async () => {
    await h.close();
    await provider.close();
    await vendor.close();
  });
  afterEach(() => void (logged.length = 0));

  it('streams the vendor generation through: its token and fields sent, its events passed on as they came', async () => {
    const music = await readMusic(await generate(h, { prompt: 'calm piano with rain', duration: '1.5' }));
    const sent = vendor.requests.at(-1)!;
    expect(sent.authorization).toBe('Bearer vendor-token-1');
    expect(sent.prompt).toBe('calm piano with rain');
    expect(sent.duration).toBe('1.5');
    expect(sent.ended).toBe(true);
    // The vendor speaks in quarter-second chunks; they come through one for one.
    expect(music.types).toEqual(['title', ...Array(6).fill('audio_chunk'), 'complete']);
    expect(music.title.title).toBe(`Calm piano in ${music.title.title.split(' in ')[1]}`);
    expectWav(music.wav, 1.5);
    expect(Buffer.from(music.wav).equals(await localWav('calm piano with rain', 1.5))).toBe(true);
    expect(music.complete.byte_size).toBe(music.wav.length);
  });

  it('reuses its connection to the vendor', async () => {
    const before = vendor.connections;
    for (let i = 0; i < 3; i++) {
      await readMusic(await generate(h, { prompt: `reuse ${i}`, duration: '1' }));
      // The pool takes the connection back a moment after the last byte.
      await sleep(20);
    }
    expect(vendor.connections).toBe(before);
    expect(new Set(vendor.requests.slice(-3).map((r) => r.connection)).size).toBe(1);
  });

  it('passes on event types it does not know; the client skips them', async () => {
    vendor.script({ kind: 'extra-types' });
    const music = await readMusic(await generate(h, { prompt: 'novelties', duration: '1' }));
    expect(music.skipped.length).toBeGreaterThan(0);
    expect(new Set(music.skipped)).toEqual(new Set(['vendor_progress']));
    expectWav(music.wav, 1);
  });

  it.each([
    [401, 502, 'upstream_error'],
    [402, 502, 'upstream_error'],
    [403, 502, 'upstream_error'],
    [422, 502, 'upstream_error'],
    [500, 502, 'upstream_error'],
    [503, 502, 'upstream_error'],
    [429, 429, 'rate_limited'],
  ])('a vendor %i is a %i %s, in generic words', async (vendorStatus, status, code) => {
    vendor.script({ kind: 'status', status: vendorStatus, retryAfter: '17' });
    const res = await generate(h, { prompt: 'refused', duration: '1' });
    if (status === 429) expect(res.headers.get('retry-after')).toBe('17');
    const message = await expectMusicError(res, status, code);
    expect(message).not.toContain(VENDOR_SECRET);
    expect(message).not.toContain(String(vendorStatus));
    expect(logged.join('\n')).toContain(`answered ${vendorStatus}`);
  });

  it('a vendor with a wrong token configured is a 502 (the caller cannot fix it)', async () => {
    const wrong = createUpstreamMusicProvider({ baseUrl: vendor.url, token: 'stale' });
    const other = await startHarness(mode, { providers: { music: wrong } });
    try {
      await expectMusicError(await generate(other, { prompt: 'x', duration: '1' }), 502, 'upstream_error');
      expect(vendor.requests.at(-1)!.authorization).toBe('Bearer stale');
    } finally {
      await other.close();
      await wrong.close();
    }
  });

  it('a vendor answer that is not NDJSON is a 502', async () => {
    vendor.script({ kind: 'not-ndjson' });
    expect(await expectMusicError(await generate(h, { prompt: 'html', duration: '1' }), 502, 'upstream_error')).not.toContain(VENDOR_SECRET);
  });

  it('a malformed first line is a 502; a malformed later line ends the stream with an error event', async () => {
    vendor.script({ kind: 'malformed', after: 0 });
    await expectMusicError(await generate(h, { prompt: 'garbled', duration: '1' }), 502, 'upstream_error');
    vendor.script({ kind: 'malformed', after: 3 });
    const music = await readMusic(await generate(h, { prompt: 'garbled later', duration: '1' }));
    expect(music.types).toEqual(['title', 'audio_chunk', 'audio_chunk', 'error']);
    expect(music.error).toEqual({ type: 'error', code: 'upstream_error', message: 'The music generator failed. Try again later.' });
    expect(logged.join('\n')).toMatch(/not JSON/);
  });

  it("the vendor's own error event and a dropped connection end the stream with a generic error event", async () => {
    vendor.script({ kind: 'error-event', after: 2 });
    const reported = await readMusic(await generate(h, { prompt: 'vendor fault', duration: '1' }));
    expect(reported.types).toEqual(['title', 'audio_chunk', 'error']);
    expect(JSON.stringify(reported.error)).not.toContain(VENDOR_SECRET);

    vendor.script({ kind: 'drop', after: 2 });
    const dropped = await readMusic(await generate(h, { prompt: 'vendor gone', duration: '1' }));
    expect(dropped.types).toEqual(['title', 'audio_chunk', 'error']);
    expect(dropped.complete).toBeUndefined();
  });

  it('a slow vendor stream reaches the client line by line while the vendor is still writing', async () => {
    vendor.script({ kind: 'slow', delayMs: 150 });
    const res = await generate(h, { prompt: 'slow and steady', duration: '1' });
    const sent = vendor.requests.at(-1)!;
    const arrivals: Array<{ type: string; vendorLines: number; at: number }> = [];
    for await (const { event, at } of ndjsonEvents(res)) arrivals.push({ type: event.type, vendorLines: sent.lines.length, at });
    expect(arrivals.map((a) => a.type)).toEqual(['title', 'audio_chunk', 'audio_chunk', 'audio_chunk', 'audio_chunk', 'complete']);
    // When the title arrived the vendor had written it alone; the lines came spread out.
    expect(arrivals[0].vendorLines).toBe(1);
    expect(arrivals[3].vendorLines).toBeLessThanOrEqual(5);
    expect(arrivals.at(-1)!.at - arrivals[0].at).toBeGreaterThanOrEqual(5 * 150 - 50);
  });

  it('a vendor that never answers is a 502 after the headers timeout', async () => {
    vendor.script({ kind: 'hang' });
    const started = Date.now();
    await expectMusicError(await generate(h, { prompt: 'silence', duration: '1' }), 502, 'upstream_error');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a vendor stream silent past the body timeout is a 502 before its first line', async () => {
    // Silent until the provider gives up: however late a busy machine's timers fire, no line can come first.
    vendor.script({ kind: 'silent' });
    await expectMusicError(await generate(h, { prompt: 'too slow', duration: '1' }), 502, 'upstream_error');
    expect(logged.join('\n')).toMatch(/timeout/i);
  });

  it('a client that leaves hangs up on the vendor', async () => {
    vendor.script({ kind: 'slow', delayMs: 50 });
    const abort = new AbortController();
    const res = await generate(h, { prompt: 'walk away', duration: '60' }, { signal: abort.signal });
    const events = ndjsonEvents(res);
    await events.next();
    await events.next();
    await walkAway(h, abort, res, events);
    const sent = vendor.requests.at(-1)!;
    await until('the vendor saw the connection go', () => sent.closedEarly, 5_000);
    expect(sent.ended).toBe(false);
    // 60 s is 240 quarter-second chunks; the vendor stopped long before.
    expect(sent.lines.length).toBeLessThan(40);
  });
});
