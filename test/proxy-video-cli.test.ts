// `graphrun serve` end to end for the video endpoint: the one outbound switch
// (--allow-private-urls) that governs LoadImageFromURL governs video key
// frames and callbacks too. Without it a loopback callback_url is refused
// at once (400); with it the task runs and its callbacks arrive.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliServers } from './helpers/cli.ts';
import { multiframe, type Receiver, solidPng, startReceiver } from './helpers/video.ts';

const serve = cliServers('graphrun-cli-video-', ['GRAPHRUN_ALLOW_PRIVATE_URLS']);
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver({ files: { '/key.png': solidPng(2, 2, [0, 128, 255]) } });
});
afterAll(async () => {
  await receiver.close();
});

const post = (base: string, body: unknown) =>
  fetch(`${base}/proxy/videogen/multiframe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('graphrun serve: the outbound switch and the video endpoint', () => {
  it('refuses loopback key frames and callbacks by default', async () => {
    const cli = await serve([]);
    const res = await post(
      await cli.url,
      multiframe({
        callback_url: `${receiver.url}/hook`,
        image_settings: [{ key_image: `${receiver.url}/key.png` }, { key_image: `${receiver.url}/key.png` }],
      }),
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.details).toHaveLength(3);
    expect(body.details.every((d: string) => /refusing to fetch 127\.0\.0\.1:\d+: it is a loopback address/.test(d))).toBe(true);
    expect(await cli.stop()).toBe(0);
  });

  it('with --allow-private-urls fetches the key frames and delivers the callbacks', async () => {
    receiver.received.length = 0;
    const cli = await serve(['--allow-private-urls']);
    const res = await post(
      await cli.url,
      multiframe({
        callback_url: `${receiver.url}/hook`,
        image_settings: [
          { key_image: `${receiver.url}/key.png`, duration: 1 },
          { key_image: `${receiver.url}/key.png`, duration: 1 },
        ],
      }),
    );
    expect(res.status).toBe(200);
    const got = await receiver.waitFor(3);
    expect(got.map((c) => c.body.state)).toEqual(['queueing', 'processing', 'success']);
    expect(got[2].body.output.content_type).toBe('image/apng');
    const video = await fetch(got[2].body.output.url);
    expect(video.status).toBe(200);
    expect(await cli.stop()).toBe(0);
  });
});
