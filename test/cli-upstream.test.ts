// `graphrun serve --music-upstream <url>` end to end: the CLI forwards music
// generation to the vendor with the token from GRAPHRUN_MUSIC_UPSTREAM_TOKEN,
// and the vendor's stream reaches the client; without the token it exits 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMusicVendor, startFakeMusicVendor } from './fakes/vendor-music.ts';
import { cliServers } from './helpers/cli.ts';
import { expectWav, MUSIC_PATH, musicForm, readMusic } from './helpers/music.ts';

const start = cliServers('graphrun-cli-upstream-', ['GRAPHRUN_MUSIC_UPSTREAM_URL', 'GRAPHRUN_VIDEO_UPSTREAM_URL']);
let vendor: FakeMusicVendor;

beforeAll(async () => {
  vendor = await startFakeMusicVendor();
});
afterAll(async () => {
  await vendor.close();
});

describe('graphrun serve --music-upstream', () => {
  it('forwards generation to the vendor with its token; the client reads the vendor stream', async () => {
    const cli = await start(['--music-upstream', vendor.url], { GRAPHRUN_MUSIC_UPSTREAM_TOKEN: vendor.token });
    const base = await cli.url;
    expect(cli.output().stderr).toContain(`music generation forwarded to ${vendor.url}`);
    const before = vendor.requests.length;
    const res = await fetch(`${base}${MUSIC_PATH}`, { method: 'POST', body: musicForm({ prompt: 'upstream organ drone', duration: '1.5' }) });
    const music = await readMusic(res);
    expectWav(music.wav, 1.5);
    expect(vendor.requests.slice(before)).toEqual([
      expect.objectContaining({ authorization: `Bearer ${vendor.token}`, prompt: 'upstream organ drone', duration: '1.5' }),
    ]);
    expect(await cli.stop()).toBe(0);
  });

  it('exits 2 when the token variable is missing', async () => {
    const cli = await start(['--music-upstream', vendor.url], {});
    await cli.url.catch(() => undefined);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toMatch(/GRAPHRUN_MUSIC_UPSTREAM_TOKEN/);
  });
});
