// POST /proxy/musicgen/t2m/generate: every bound of the form, in process and
// through a real server. A form that is not one is a 400; a field out of its
// bounds a 422; accepted forms stream (only the head of long ones is read).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { expectMusicError, generate, MUSIC_PATH, ndjsonEvents, readMusic } from './helpers/music.ts';

/** Accepted: the first line is the title, then the rest is dropped. */
async function expectAccepted(res: Response): Promise<any> {
  expect(res.status).toBe(200);
  const events = ndjsonEvents(res);
  const first = await events.next();
  expect(first.value!.event.type).toBe('title');
  await events.return(undefined);
  await res.body?.cancel().catch(() => {});
  return first.value!.event;
}

describe.each(MODES)('music form bounds (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(() => h.close());

  describe('prompt', () => {
    it('is required', async () => {
      expect(await expectMusicError(await generate(h, { duration: '5' }), 422, 'validation_error')).toMatch(/^prompt: is required/);
    });
    it.each([
      ['empty', ''],
      ['blank', ' \n\t '],
    ])('must not be %s', async (_, prompt) => {
      expect(await expectMusicError(await generate(h, { prompt, duration: '1' }), 422, 'validation_error')).toBe('prompt: must not be empty');
    });
    it('takes 2000 characters, counted as code points, and not 2001', async () => {
      await expectAccepted(await generate(h, { prompt: 'a'.repeat(2000), duration: '1' }));
      await expectAccepted(await generate(h, { prompt: '🎹'.repeat(2000), duration: '1' }));
      const msg = await expectMusicError(await generate(h, { prompt: 'a'.repeat(2001), duration: '1' }), 422, 'validation_error');
      expect(msg).toBe('prompt: must be at most 2000 characters');
      await expectMusicError(await generate(h, { prompt: '🎹'.repeat(2001), duration: '1' }), 422, 'validation_error');
      await expectMusicError(await generate(h, { prompt: 'a'.repeat(20_000), duration: '1' }), 422, 'validation_error');
    });
    it('is trimmed before it is measured', async () => {
      await expectAccepted(await generate(h, { prompt: `  ${'a'.repeat(2000)}  `, duration: '1' }));
    });
    it('refuses control characters but takes tabs and line breaks', async () => {
      await expectMusicError(await generate(h, { prompt: 'calm\u0000piano', duration: '1' }), 422, 'validation_error');
      await expectMusicError(await generate(h, { prompt: 'calm\u001bpiano', duration: '1' }), 422, 'validation_error');
      await expectAccepted(await generate(h, { prompt: 'calm\tpiano\r\nwith rain', duration: '1' }));
    });
    it('must be UTF-8', async () => {
      const boundary = 'b0undary';
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n`),
        Buffer.from([0x63, 0xff, 0xfe, 0x61]),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const res = await h.fetch(MUSIC_PATH, { method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect(await expectMusicError(res, 422, 'validation_error')).toBe('prompt: must be UTF-8 text');
    });
    it('may be given once only', async () => {
      await expectMusicError(await generate(h, { prompt: ['a', 'b'], duration: '1' }), 422, 'validation_error');
    });
  });

  describe('duration (seconds)', () => {
    it('defaults to 30 when absent or empty', async () => {
      const music = await readMusic(await generate(h, { prompt: 'a default length' }));
      expect(music.complete.duration).toBe(30);
      const empty = await readMusic(await generate(h, { prompt: 'a default length', duration: '' }));
      expect(empty.complete.hash).toBe(music.complete.hash);
    });
    it.each(['1', '1.0', '12.5', '300', ' 42 '])('takes %j', async (duration) => {
      await expectAccepted(await generate(h, { prompt: 'bounds', duration }));
    });
    it.each(['0', '0.999', '300.001', '301', '-5', '1e2', 'abc', '30s', '.5', 'NaN', 'Infinity', '0x10'])('refuses %j', async (duration) => {
      const msg = await expectMusicError(await generate(h, { prompt: 'bounds', duration }), 422, 'validation_error');
      expect(msg).toMatch(/^duration: /);
    });
    it('refuses a value longer than a number could be', async () => {
      await expectMusicError(await generate(h, { prompt: 'bounds', duration: '1'.repeat(100) }), 422, 'validation_error');
    });
    it('may be given once only', async () => {
      await expectMusicError(await generate(h, { prompt: 'bounds', duration: ['5', '6'] }), 422, 'validation_error');
    });
  });

  describe('the form itself', () => {
    it('ignores fields it does not know', async () => {
      await expectAccepted(await generate(h, { prompt: 'extra fields', duration: '1', seed: '7', model: 'whatever' }));
    });
    it('must be multipart/form-data (400)', async () => {
      const json = await h.fetch(MUSIC_PATH, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'x' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(await expectMusicError(json, 400, 'bad_request')).toMatch(/multipart\/form-data/);
      const urlencoded = await h.fetch(MUSIC_PATH, { method: 'POST', body: new URLSearchParams({ prompt: 'x' }) });
      await expectMusicError(urlencoded, 400, 'bad_request');
      await expectMusicError(await h.fetch(MUSIC_PATH, { method: 'POST' }), 400, 'bad_request');
    });
    it('that cannot be parsed is a 400', async () => {
      const res = await h.fetch(MUSIC_PATH, {
        method: 'POST',
        body: '--xyz\r\nContent-Disposition: form-data; name="prompt"\r\n\r\ncalm piano',
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      });
      expect(await expectMusicError(res, 400, 'bad_request')).toMatch(/could not be parsed/);
    });
    it('larger than 64 KiB is a 400, whatever its parts', async () => {
      const form = new FormData();
      form.append('prompt', 'calm');
      form.append('attachment', new Blob([new Uint8Array(70 * 1024)]), 'big.bin');
      expect(await expectMusicError(await h.fetch(MUSIC_PATH, { method: 'POST', body: form }), 400, 'bad_request')).toMatch(/65536 bytes/);
    });
    describe('over 64 KiB in its prompt is a 400 however its length is sent', () => {
      const boundary = 'b0undary';
      const formBytes = (prompt: string) =>
        new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n${prompt}\r\n--${boundary}--\r\n`);
      const contentType = `multipart/form-data; boundary=${boundary}`;
      /** The bytes as a stream of 4 KiB chunks: no Content-Length, chunked through a real server. */
      const chunked = (bytes: Uint8Array) =>
        new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < bytes.length; i += 4096) c.enqueue(bytes.slice(i, i + 4096));
            c.close();
          },
        });

      it('with Content-Length', async () => {
        const body = formBytes('a'.repeat(70 * 1024));
        const res = await h.fetch(MUSIC_PATH, {
          method: 'POST',
          body,
          headers: { 'content-type': contentType, 'content-length': String(body.length) },
        });
        expect(await expectMusicError(res, 400, 'bad_request')).toBe('The form is larger than 65536 bytes.');
      });
      it('chunked, without Content-Length', async () => {
        const res = await h.fetch(MUSIC_PATH, {
          method: 'POST',
          body: chunked(formBytes('a'.repeat(70 * 1024))),
          headers: { 'content-type': contentType },
        });
        expect(await expectMusicError(res, 400, 'bad_request')).toBe('The form is larger than 65536 bytes.');
      });
      it('while a chunked form under the limit is read as usual (a 422 for a long prompt, 200 for a good one)', async () => {
        const long = await h.fetch(MUSIC_PATH, {
          method: 'POST',
          body: chunked(formBytes('a'.repeat(20_000))),
          headers: { 'content-type': contentType },
        });
        expect(await expectMusicError(long, 422, 'validation_error')).toBe('prompt: must be at most 2000 characters');
        await expectAccepted(
          await h.fetch(MUSIC_PATH, { method: 'POST', body: chunked(formBytes('calm piano')), headers: { 'content-type': contentType } }),
        );
      });
    });
    it('has no other method', async () => {
      const res = await h.fetch(MUSIC_PATH);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      await res.body?.cancel();
    });
  });
});
