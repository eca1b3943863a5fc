// The client commands of `graphrun` (run, jobs, cancel, upload) end to end:
// the CLI's source in a pseudo-terminal, where `run` draws its live progress
// bar, or on pipes, where it prints plain lines, against real servers in this
// process: one that runs jobs, one that never does (runJobs: false), so a
// job stays queued for as long as a test needs it there. A small proxy in
// front of them drops an event stream or plays a server without one.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runClient } from '../adapters/node/client/program.ts';
import { decodePngRgba8 } from '../lib/png/decode.ts';
import { encodePng } from '../lib/png/encode.ts';
import { type CliProcess, spawnCli } from './helpers/cli.ts';
import { plainText, spawnPtyCli } from './helpers/cli-pty.ts';
import { freePort } from './helpers/free-port.ts';
import { asKey, getWorkflow, type JobsHarness, jobNow, startJobs, submitOk, until } from './helpers/jobs.ts';
import { sumWorkflow } from './helpers/local-nodes.ts';
import { startTapProxy, type TapProxy } from './helpers/tap-proxy.ts';

const TOKEN = 'cli-client-secret';
const UNSET = ['GRAPHRUN_URL', 'GRAPHRUN_TOKEN'];
/** 3x2 RGB pixels, each channel distinct, so an inversion shows everywhere. */
const PIXELS = Uint8Array.from({ length: 3 * 2 * 3 }, (_, i) => (i * 37 + 11) % 256);
const INVERT = {
  load: { class_type: 'LoadImage', inputs: { image: 'set by --input' } },
  invert: { class_type: 'ImageInvert', inputs: { image: ['load', 0] } },
  save: { class_type: 'SaveImage', inputs: { images: ['invert', 0], filename_prefix: 'cli' } },
};
/** Each CLI started runs its source through tsx, seconds of CPU on a busy machine. */
const SPAWN_TIMEOUT = 60_000;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

let live: JobsHarness;
let held: JobsHarness;
let dir: string;
const proxies: TapProxy[] = [];
const children: CliProcess[] = [];

beforeAll(async () => {
  [live, held] = await Promise.all([startJobs('node-server', { token: TOKEN }), startJobs('node-server', { token: TOKEN, runJobs: false })]);
  live = asKey(live, TOKEN);
  held = asKey(held, TOKEN);
  dir = await mkdtemp(join(tmpdir(), 'graphrun-client-'));
  await writeFile(join(dir, 'in.png'), encodePng({ width: 3, height: 2, channels: 3, data: PIXELS }));
  // The cloud /api/prompt wrapper, and the bare API format.
  await writeFile(join(dir, 'invert-prompt.json'), JSON.stringify({ prompt: INVERT, client_id: 'cli-test' }));
  await writeFile(join(dir, 'invert.json'), JSON.stringify(INVERT));
});
afterEach(async () => {
  for (const cli of children.splice(0)) if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await Promise.all([live?.close(), held?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `graphrun <args>` on pipes (no terminal), talking to `base` with the token. */
function piped(args: string[], base: string, env: Record<string, string> = {}): CliProcess {
  const cli = spawnCli(args, { GRAPHRUN_URL: base, GRAPHRUN_TOKEN: TOKEN, ...env }, UNSET);
  children.push(cli);
  return cli;
}

const runInvert = (file: string, out: string) => ['run', join(dir, file), '--input', `load.image=${join(dir, 'in.png')}`, '--out', out];

async function contentOf(h: JobsHarness, assetId: string): Promise<Buffer> {
  const res = await h.fetch(`/api/v2/assets/${assetId}/content`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The output the CLI saved: the same bytes as the job's output asset, and the input's pixels inverted. */
async function expectInvertedOutput(h: JobsHarness, jobId: string, saved: string): Promise<void> {
  const job = await jobNow(h, jobId);
  expect(job.status).toBe('succeeded');
  expect(job.outputs).toHaveLength(1);
  const bytes = await readFile(saved);
  expect(bytes.equals(await contentOf(h, job.outputs[0].id))).toBe(true);
  const png = decodePngRgba8(new Uint8Array(bytes));
  expect([png.width, png.height]).toEqual([3, 2]);
  const rgb = [...png.data].filter((_, i) => i % 4 !== 3);
  expect(rgb).toEqual([...PIXELS].map((v) => 255 - v));
}

describe('graphrun run', { timeout: SPAWN_TIMEOUT }, () => {
  it('on a terminal: uploads the input, draws the progress bar, downloads the output', async () => {
    const out = await mkdtemp(join(dir, 'out-'));
    const cli = spawnPtyCli(runInvert('invert-prompt.json', out), { GRAPHRUN_URL: live.base, GRAPHRUN_TOKEN: TOKEN });
    expect(await cli.exited, cli.output()).toBe(0);
    const text = plainText(cli.output());
    // Drawn in place by cli-progress (cursor moves, hidden cursor), ending on the finished job.
    expect(cli.output()).toContain('\x1b[?25l');
    expect(text).toMatch(/█+ 100% \| node 3 of 3, succeeded/);
    const assetId = new RegExp(`uploaded \\S+in\\.png as asset (${UUID}) for load\\.image`).exec(text)![1];
    const jobId = new RegExp(`job (${UUID}) submitted`).exec(text)![1];
    const saved = new RegExp(`^(${out}/cli_\\d+_\\.png)\\r?$`, 'm').exec(text)![1];

    await expectInvertedOutput(live, jobId, saved);
    // LoadImage got the uploaded file, through the contract's typed asset reference.
    expect((await contentOf(live, assetId)).equals(await readFile(join(dir, 'in.png')))).toBe(true);
    const { body } = await getWorkflow(live, jobId);
    expect(JSON.stringify(body.workflow.load.inputs.image)).toContain(assetId);
  });

  it('on pipes: plain progress lines on stderr, no escape codes, the saved paths on stdout', async () => {
    const out = await mkdtemp(join(dir, 'out-'));
    const cli = piped(runInvert('invert.json', out), live.base);
    expect(await cli.exited, cli.output().stderr).toBe(0);
    const { stdout, stderr } = cli.output();
    expect(stdout + stderr).not.toMatch(/\x1b/);
    expect(stderr).toMatch(/^\[ {2}0%\] queued/m);
    expect(stderr).toMatch(/^\[100%\] node 3 of 3, succeeded$/m);
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^${out}/cli_\\d+_\\.png$`))]);
    const jobId = new RegExp(`job (${UUID}) submitted`).exec(stderr)![1];
    await expectInvertedOutput(live, jobId, lines[0]);
  });

  it('a job that fails exits 1 with its error: code, node and message', async () => {
    const workflow = {
      f1: { class_type: 'Number', inputs: { value: 1 } },
      f2: { class_type: 'Fail', inputs: { value: ['f1', 0] } },
      f3: { class_type: 'Show', inputs: { value: ['f2', 0] } },
    };
    await writeFile(join(dir, 'fail.json'), JSON.stringify(workflow));
    const cli = spawnPtyCli(['run', join(dir, 'fail.json'), '--out', dir], { GRAPHRUN_URL: live.base, GRAPHRUN_TOKEN: TOKEN });
    expect(await cli.exited).toBe(1);
    const text = plainText(cli.output());
    expect(text).toMatch(new RegExp(`graphrun: job ${UUID} failed: \\w+ at node f2 \\(Fail\\): .*cannot do that`));
    expect(text).toMatch(/\| node \d of 3 Fail, failed/);
  });

  it('a workflow the server refuses exits 1 with its message and node errors', async () => {
    await writeFile(join(dir, 'unknown.json'), JSON.stringify({ a: { class_type: 'NoSuchNode', inputs: {} } }));
    const cli = piped(['run', join(dir, 'unknown.json')], live.base);
    expect(await cli.exited).toBe(1);
    const { stderr } = cli.output();
    expect(stderr).toMatch(/^graphrun: invalid_workflow: .*NoSuchNode/m);
    expect(stderr).toMatch(/^ {2}node a: \w+: .*NoSuchNode/m);
  });

  it('Ctrl-C while the job waits cancels it and exits 130', async () => {
    const cli = spawnPtyCli(['run', join(dir, 'invert.json'), '--input', `load.image=${join(dir, 'in.png')}`], {
      GRAPHRUN_URL: held.base,
      GRAPHRUN_TOKEN: TOKEN,
    });
    // The bar shows the job queued (the server runs none): the job exists and the CLI watches it.
    await cli.printed(/queued \(position \d+\)/);
    const jobId = new RegExp(`job (${UUID}) submitted`).exec(plainText(cli.output()))![1];
    cli.pty.write('\x03');
    expect(await cli.exited).toBe(130);
    expect(plainText(cli.output())).toContain(`graphrun: interrupted: job ${jobId} canceled`);
    expect((await jobNow(held, jobId)).status).toBe('canceled');
  });

  it('reconnects when the event stream drops, sending the last event id it saw', async () => {
    // The first stream says "queued, position 3" with an id, then ends as if the connection dropped.
    const proxy = await startTapProxy(held.base, (req, res, seen) => {
      if (!req.url?.endsWith('/events') || seen.filter((r) => r.path.endsWith('/events')).length > 1) return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('id: 7\nevent: status\ndata: {"status":"queued","queue_position":3}\n\n');
      return true;
    });
    proxies.push(proxy);
    await writeFile(join(dir, 'sum.json'), JSON.stringify(sumWorkflow('n')));
    const cli = piped(['run', join(dir, 'sum.json')], proxy.url);
    const streams = () => proxy.requests.filter((r) => r.path.endsWith('/events'));
    await until('the CLI reconnects', () => streams().length === 2, 15_000);
    expect(streams()[0].headers['last-event-id']).toBeUndefined();
    expect(streams()[1].headers['last-event-id']).toBe('7');
    // Live again: a cancel reaches the CLI through the new stream.
    const jobId = new RegExp(`job (${UUID}) submitted`).exec(cli.output().stderr)![1];
    await held.fetch(`/api/v2/jobs/${jobId}/cancel`, { method: 'POST' });
    expect(await cli.exited).toBe(1);
    const { stderr } = cli.output();
    expect(stderr).toContain('queued (position 3)');
    expect(stderr).toMatch(/the event stream ended early; reconnecting/);
    expect(stderr).toContain(`graphrun: job ${jobId} canceled`);
  });

  it('polls the job when the server has no event stream', async () => {
    const proxy = await startTapProxy(live.base, (req, res) => {
      if (!req.url?.endsWith('/events')) return false;
      res.writeHead(501, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_implemented', message: 'No live event streaming here.' } }));
      return true;
    });
    proxies.push(proxy);
    const out = await mkdtemp(join(dir, 'out-'));
    const cli = piped(runInvert('invert.json', out), proxy.url);
    expect(await cli.exited, cli.output().stderr).toBe(0);
    const { stdout, stderr } = cli.output();
    expect(stderr).toContain('the event stream answered 501; polling the job instead');
    const jobId = new RegExp(`job (${UUID}) submitted`).exec(stderr)![1];
    expect(proxy.requests.some((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${jobId}`)).toBe(true);
    await expectInvertedOutput(live, jobId, stdout.trim());
  });
});

describe('graphrun jobs, cancel, upload', { timeout: SPAWN_TIMEOUT }, () => {
  it('jobs lists the caller’s jobs as a table, or as JSON', async () => {
    const job = await submitOk(held, sumWorkflow('j'));
    const [table, json] = [piped(['jobs', '--status', 'queued'], held.base), piped(['jobs', '--json', '--limit', '1'], held.base)];
    expect(await table.exited, table.output().stderr).toBe(0);
    expect(await json.exited, json.output().stderr).toBe(0);
    const lines = table.output().stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID +STATUS +CREATED \(UTC\) +PROGRESS +OUTPUTS +ERROR$/);
    expect(lines.find((l) => l.startsWith(job.id))).toMatch(/^\S+ +queued +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +- +0$/);
    const listed = JSON.parse(json.output().stdout);
    expect(listed.map((j: any) => j.id)).toEqual([job.id]);
  });

  it('cancel cancels a queued job; an unknown id exits 1 with the server’s error', async () => {
    const job = await submitOk(held, sumWorkflow('c'));
    const unknown = crypto.randomUUID();
    const [cancel, missing] = [piped(['cancel', job.id], held.base), piped(['cancel', unknown], held.base)];
    expect(await cancel.exited, cancel.output().stderr).toBe(0);
    expect(cancel.output().stdout).toBe(`job ${job.id} canceled\n`);
    expect((await jobNow(held, job.id)).status).toBe('canceled');
    expect(await missing.exited).toBe(1);
    expect(missing.output().stderr).toBe('graphrun: not_found: No job with this id.\n');
  });

  it('upload prints the new asset’s id, or with --json the asset', async () => {
    await writeFile(join(dir, 'notes.txt'), 'uploaded by the CLI');
    const [plain, json] = [piped(['upload', join(dir, 'notes.txt')], live.base), piped(['upload', join(dir, 'in.png'), '--json'], live.base)];
    expect(await plain.exited, plain.output().stderr).toBe(0);
    expect(await json.exited, json.output().stderr).toBe(0);
    const id = plain.output().stdout.trim();
    expect(id).toMatch(new RegExp(`^${UUID}$`));
    expect((await contentOf(live, id)).toString()).toBe('uploaded by the CLI');
    const asset = JSON.parse(json.output().stdout);
    expect(asset).toMatchObject({ content_type: 'image/png', file_path: 'in.png', hash: expect.stringMatching(/^blake3:/) });
    expect((await contentOf(live, asset.id)).equals(await readFile(join(dir, 'in.png')))).toBe(true);
  });
});

describe('mistakes and failures', { timeout: SPAWN_TIMEOUT }, () => {
  it('wrong arguments exit 2 with the usage', async () => {
    // Through the process: commander's refusal, and one found while reading the arguments.
    const [missing, badInput] = [piped(['run'], live.base), piped(['run', join(dir, 'invert.json'), '--input', 'nodot=x.png'], live.base)];
    expect(await missing.exited).toBe(2);
    expect(missing.output().stderr).toMatch(/missing required argument 'workflow'[\s\S]*Usage: graphrun run \[options\] <workflow>/);
    expect(await badInput.exited).toBe(2);
    expect(badInput.output().stderr).toBe(
      'graphrun run: --input must look like NODE.INPUT=path (e.g. 10.image=photo.png), got "nodot=x.png".\nRun "graphrun run --help" for usage.\n',
    );
  });

  it('each kind of argument mistake is a usage error (2), found before any request', async () => {
    // In this process (the same runClient main() calls), as starting a CLI per case would take long: nothing listens at the URL.
    const cases: Array<[string[], RegExp]> = [
      [['jobs', '--limit', '0'], /--limit <n>' argument '0' is invalid[\s\S]*Usage: graphrun jobs/],
      [['jobs', '--status', 'done'], /A status is one of queued, running/],
      [['cancel', 'a', 'b'], /too many arguments[\s\S]*Usage: graphrun cancel/],
      [['upload', '--bogus', 'x'], /unknown option '--bogus'[\s\S]*Usage: graphrun upload/],
      [['upload', join(dir, 'absent.png')], /cannot read .*absent\.png/],
      [['run', join(dir, 'invert.json'), '--input', `nope.image=${join(dir, 'in.png')}`], /the workflow has no node "nope"/],
      [['run', join(dir, 'invert.json'), '--input', `load.image=${join(dir, 'absent.png')}`], /--input load\.image: cannot read/],
      [['run', join(dir, 'missing.json')], /cannot read the workflow/],
      [['run', join(dir, 'in.png')], /is not JSON/],
      [['jobs', '--url', 'ftp://x'], /--url must be an http\(s\) URL/],
    ];
    const env = { GRAPHRUN_URL: `http://127.0.0.1:${await freePort()}` };
    for (const [args, message] of cases) {
      let stderr = '';
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
      try {
        expect(await runClient(args, env), args.join(' ')).toBe(2);
      } finally {
        spy.mockRestore();
      }
      expect(stderr).toMatch(message);
    }
  });

  it('an unreachable server and a wrong token exit 1 with a clear message', async () => {
    const port = await freePort();
    const [refused, denied] = [piped(['jobs'], `http://127.0.0.1:${port}`), piped(['jobs'], live.base, { GRAPHRUN_TOKEN: 'wrong' })];
    expect(await refused.exited).toBe(1);
    expect(refused.output().stderr).toBe(
      `graphrun: cannot reach http://127.0.0.1:${port}: connection refused: is the server running there? Pass --url or set GRAPHRUN_URL\n`,
    );
    expect(await denied.exited).toBe(1);
    expect(denied.output().stderr).toMatch(/^graphrun: unauthorized: /);
  });
});
