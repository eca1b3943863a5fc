// The six music errors, each with its status and `{detail: {code, message}}`:
// 400 bad_request, 401 unauthorized, 402 insufficient_credits, 422
// validation_error, 429 rate_limited (concurrent generations per account),
// 502 upstream_error (generic, before the first byte; a terminal error event after).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CreditsProvider } from '../core/jobs/credits.ts';
import { createLocalMusicProvider } from '../providers/local/music/provider.ts';
import { type MusicProvider, MusicProviderError } from '../providers/music.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { expectMusicError, generate, MUSIC_PATH, ndjsonEvents, readMusic } from './helpers/music.ts';

const ACCOUNTS = [
  { id: 'alice', apiKeys: ['key-alice'] },
  { id: 'bob', apiKeys: ['key-bob'] },
];
const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

/** A ledger: balances per account, every charge recorded. */
function ledger(balances: Record<string, number>) {
  const charges: Array<[account: string, amount: number, what: string]> = [];
  const provider: Required<CreditsProvider> = {
    hasCredits: async (id) => (balances[id] ?? 0) > 0,
    async charge(id, amount, what) {
      charges.push([id, amount, what]);
      if ((balances[id] ?? 0) < amount) return false;
      balances[id] -= amount;
      return true;
    },
  };
  return { provider, charges, balances };
}

/** Opens a generation and reads its title; the rest stays unread, so the generation holds its slot. */
async function hold(h: Harness, key: string): Promise<() => Promise<void>> {
  const res = await generate(h, { prompt: 'held open', duration: '300' }, as(key));
  expect(res.status).toBe(200);
  const events = ndjsonEvents(res);
  expect((await events.next()).value!.event.type).toBe('title');
  return async () => {
    await events.return(undefined);
    await res.body!.cancel().catch(() => {});
  };
}

describe.each(MODES)('music errors (%s)', (mode) => {
  let h: Harness;
  const credits = ledger({ alice: 1000, bob: 2 });
  beforeAll(async () => {
    h = await startHarness(mode, { accounts: ACCOUNTS, credits: credits.provider });
  });
  afterAll(() => h.close());

  it('400 bad_request: a body that is not a multipart form', async () => {
    await expectMusicError(await h.fetch(MUSIC_PATH, { method: 'POST', body: 'prompt=x', ...as('key-alice') }), 400, 'bad_request');
  });

  it('401 unauthorized: no key, a malformed header, an unknown key; checked before the form', async () => {
    for (const headers of <Record<string, string>[]>[
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer nope' },
      { authorization: 'Bearer' },
    ]) {
      const res = await h.fetch(MUSIC_PATH, { method: 'POST', body: 'not a form', headers });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      await expectMusicError(res, 401, 'unauthorized');
    }
  });

  it('a known key as X-API-Key alone is also accepted', async () => {
    const res = await generate(h, { prompt: 'key header', duration: '1' }, { headers: { 'x-api-key': 'key-alice' } });
    await readMusic(res);
  });

  it('402 insufficient_credits: one credit per started 10 s, charged to the caller, nothing taken on a refusal', async () => {
    credits.charges.length = 0;
    const ok = await generate(h, { prompt: 'cheap', duration: '20' }, as('key-bob'));
    expect(ok.headers.get('x-credits-charged')).toBe('2');
    await readMusic(ok);
    expect(credits.balances.bob).toBe(0);
    const refused = await generate(h, { prompt: 'cheap', duration: '1' }, as('key-bob'));
    expect(await expectMusicError(refused, 402, 'insufficient_credits')).toMatch(/credits/);
    expect(credits.charges).toEqual([
      ['bob', 2, 'music generation'],
      ['bob', 1, 'music generation'],
    ]);
  });

  it.each([
    ['1', 1],
    ['10', 1],
    ['10.5', 2],
    ['30', 3],
    ['300', 30],
  ])('a %s s generation costs %i credits', async (duration, amount) => {
    credits.charges.length = 0;
    const res = await generate(h, { prompt: 'price', duration }, as('key-alice'));
    expect(res.status).toBe(200);
    await res.body!.cancel();
    expect(credits.charges).toEqual([['alice', amount, 'music generation']]);
  });

  it('422 validation_error: a field out of its bounds, and nothing is charged', async () => {
    credits.charges.length = 0;
    await expectMusicError(await generate(h, { prompt: 'x', duration: '301' }, as('key-alice')), 422, 'validation_error');
    expect(credits.charges).toEqual([]);
  });

  it('429 rate_limited: two generations per account at once; others are not held back; a slot frees when a stream ends', async () => {
    const first = await hold(h, 'key-alice');
    const second = await hold(h, 'key-alice');
    credits.charges.length = 0;
    const third = await generate(h, { prompt: 'one too many', duration: '1' }, as('key-alice'));
    expect(third.headers.get('retry-after')).toBe('5');
    expect(await expectMusicError(third, 429, 'rate_limited')).toMatch(/at once/);
    expect(credits.charges).toEqual([]);

    credits.balances.bob = 10;
    await readMusic(await generate(h, { prompt: 'another account', duration: '1' }, as('key-bob')));

    await first();
    // The slot is given back once the server sees the stream go.
    let res: Response | undefined;
    for (let i = 0; i < 50; i++) {
      res = await generate(h, { prompt: 'after one ended', duration: '1' }, as('key-alice'));
      if (res.status !== 429) break;
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 20));
    }
    await readMusic(res!);
    await second();
  });
});

describe.each(MODES)('music generator failures (%s)', (mode) => {
  let h: Harness;
  let behaviour: 'throw' | 'busy' | 'empty' | 'break' = 'throw';
  const failing: MusicProvider = {
    name: 'failing',
    async *generate(request, signal) {
      if (behaviour === 'throw') throw new Error('vendor said: GPU 7 on fire (secret detail)');
      if (behaviour === 'busy') throw new MusicProviderError('rate_limited', 'vendor queue full (secret)', 12);
      if (behaviour === 'empty') return;
      let n = 0;
      for await (const event of createLocalMusicProvider().generate(request, signal)) {
        if (n++ === 2) throw new Error('connection reset by vendor (secret detail)');
        yield event;
      }
    },
  };
  const logged: string[] = [];
  beforeAll(async () => {
    const logger = { info() {}, warn() {}, error: (m: string, f?: Record<string, unknown>) => void logged.push(`${m} ${JSON.stringify(f)}`) };
    h = await startHarness(mode, { providers: { music: failing }, logger });
  });
  afterAll(() => h.close());
  afterEach(() => void (logged.length = 0));

  it('502 upstream_error: a generator that fails before its first event, in generic words (the detail is logged)', async () => {
    behaviour = 'throw';
    const message = await expectMusicError(await generate(h, { prompt: 'x', duration: '1' }), 502, 'upstream_error');
    expect(message).toBe('The music generator failed. Try again later.');
    expect(logged.join('\n')).toMatch(/GPU 7 on fire/);
  });

  it('502 upstream_error: a generator that ends without a single event', async () => {
    behaviour = 'empty';
    await expectMusicError(await generate(h, { prompt: 'x', duration: '1' }), 502, 'upstream_error');
  });

  it('429 rate_limited: a generator that is busy, with its Retry-After', async () => {
    behaviour = 'busy';
    const res = await generate(h, { prompt: 'x', duration: '1' });
    expect(res.headers.get('retry-after')).toBe('12');
    expect(await expectMusicError(res, 429, 'rate_limited')).not.toMatch(/secret/);
  });

  it('a failure after the stream began: a terminal error event, generic, and the stream ends', async () => {
    behaviour = 'break';
    const music = await readMusic(await generate(h, { prompt: 'x', duration: '2' }));
    expect(music.types).toEqual(['title', 'audio_chunk', 'error']);
    expect(music.error).toEqual({ type: 'error', code: 'upstream_error', message: 'The music generator failed. Try again later.' });
    expect(music.complete).toBeUndefined();
    expect(logged.join('\n')).toMatch(/connection reset by vendor/);
  });

  it('a failure does not keep the slot: the account can generate again', async () => {
    behaviour = 'throw';
    for (let i = 0; i < 3; i++) await expectMusicError(await generate(h, { prompt: 'x', duration: '1' }), 502, 'upstream_error');
    behaviour = 'break';
    for (let i = 0; i < 3; i++) expect((await readMusic(await generate(h, { prompt: 'x', duration: '2' }))).error).toBeDefined();
  });
});
