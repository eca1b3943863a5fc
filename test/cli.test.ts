// The `graphrun` executable end to end: it starts on SQLite + files under
// --data, prints its URL, serves uploads, and exits 0 on SIGTERM.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli as run } from './helpers/cli.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('graphrun serve', () => {
  it('serves on the embedded defaults under --data and shuts down cleanly', async () => {
    const data = await mkdtemp(join(tmpdir(), 'graphrun-cli-'));
    dirs.push(data);
    const cli = run(['serve', '--port', '0', '--data', data]);
    const url = await cli.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const form = new FormData();
    form.set('file', new Blob(['cli bytes']), 'c.txt');
    form.set('content_type', 'text/plain');
    form.set('file_path', 'c.txt');
    const res = await fetch(`${url}/api/v2/assets`, { method: 'POST', body: form });
    expect(res.status).toBe(201);
    const asset = (await res.json()) as { url: string };
    expect(await (await fetch(asset.url)).text()).toBe('cli bytes');
    expect((await readdir(data)).sort()).toEqual(expect.arrayContaining(['blobs', 'graphrun.db']));

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('requires the token given through the environment', async () => {
    const data = await mkdtemp(join(tmpdir(), 'graphrun-cli-'));
    dirs.push(data);
    const cli = run(['serve', '--port', '0', '--data', data], { GRAPHRUN_TOKEN: 's3cret' });
    const url = await cli.url;
    const anonymous = await fetch(`${url}/api/v2/assets/${crypto.randomUUID()}`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as any).error.code).toBe('unauthorized');
    const authed = await fetch(`${url}/api/v2/assets/${crypto.randomUUID()}`, { headers: { authorization: 'Bearer s3cret' } });
    expect(authed.status).toBe(404);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });

  it('exits 2 with a clear message on a bad flag', async () => {
    const cli = run(['serve', '--port', 'nope']);
    await cli.url.catch(() => undefined);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toMatch(/port/);
  });
});
