// A client that goes away stops the generation: the generator sees its
// signal aborted and produces nothing more, and the account's slot is free
// again. Through a real server the client drops the connection; in process
// it cancels the body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalMusicProvider } from '../providers/local/music/provider.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { sleep, until } from './helpers/jobs.ts';
import { type Counted, counting, generate, ndjsonEvents, readMusic, walkAway } from './helpers/music.ts';

describe.each(MODES)('music client disconnect (%s)', (mode) => {
  let h: Harness;
  let counted: Counted;
  beforeAll(async () => {
    counted = counting(createLocalMusicProvider());
    // One at a time: a generation that did not stop would lock the account out.
    h = await startHarness(mode, { providers: { music: counted.provider }, musicConcurrencyPerAccount: 1 });
  });
  afterAll(() => h.close());

  it('stops the generator a few chunks in, and frees the slot', async () => {
    const abort = new AbortController();
    const res = await generate(h, { prompt: 'a long piece', duration: '300' }, { signal: abort.signal });
    const events = ndjsonEvents(res);
    for (let i = 0; i < 3; i++) await events.next();
    await walkAway(h, abort, res, events);

    const run = counted.runs.at(-1)!;
    await until('the generator ended', () => run.finished, 5_000);
    expect(run.aborted).toBe(true);
    const produced = run.produced;
    // 300 s is 600 chunks; the generator stopped far short of them.
    expect(produced).toBeLessThan(100);
    await sleep(300);
    expect(run.produced).toBe(produced);

    // The account may generate again (its one slot is back).
    const next = await readMusic(await generate(h, { prompt: 'after the drop', duration: '1' }));
    expect(next.complete.duration).toBe(1);
  });

  it('a client gone before reading anything stops it too', async () => {
    const abort = new AbortController();
    const res = await generate(h, { prompt: 'never read', duration: '300' }, { signal: abort.signal });
    expect(res.status).toBe(200);
    await walkAway(h, abort, res);
    const run = counted.runs.at(-1)!;
    await until('the generator ended', () => run.finished, 5_000);
    expect(run.produced).toBeLessThan(100);
    await readMusic(await generate(h, { prompt: 'after the drop', duration: '1' }));
  });

  it('a stream read to its end finishes the generator normally', async () => {
    await readMusic(await generate(h, { prompt: 'whole', duration: '1' }));
    const run = counted.runs.at(-1)!;
    await until('the generator ended', () => run.finished);
    expect(run.aborted).toBe(false);
    expect(run.produced).toBe(1 + 2 + 1);
  });
});
