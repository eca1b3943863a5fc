// `graphrun serve --deployments <file>` end to end, the CLI's source on
// pipes over SQLite in a temporary directory: each deployment runs its own
// jobs on its own storage, reached by path (/deployment/<id>/...) or by host
// (<id>.<base domain>), the rest going to 'default'; `graphrun deployments`
// lists, stops and starts them (a stop is stored, so a restart keeps it);
// `graphrun servers --deployment` reaches one deployment's pool; a bad file
// is a usage mistake (exit 2) that says what is wrong.

import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, OPERATOR_ENV, spawnCli } from './helpers/cli.ts';
import { INVERTED_RGBA, jobWhenDone, outputPixels, submitInvert, uploadPng } from './helpers/cli-jobs.ts';

/** Each CLI started runs its source through tsx, seconds of CPU on a busy machine. */
const SPAWN_TIMEOUT = 60_000;
const OPERATOR = 'operator-secret';
/** A worker no one answers at: the deployment 'pool' is never ready, which only it shows. */
const DEAD_WORKER = 'http://127.0.0.1:9';
const FILE = {
  baseDomains: ['run.test'],
  stagingDomains: ['stg.run.test'],
  deployments: [
    { id: 'sdxl', threads: 1 },
    { id: 'beta', staging: true, threads: 1 },
    { id: 'pool', workers: [DEAD_WORKER] },
  ],
};

let dir: string;
let data: string;
let file: string;
let server: CliProcess | undefined;
let url: string;

const serve = (env: Record<string, string> = {}) =>
  spawnCli(
    ['serve', '--port', '0', '--data', data, '--threads', '1', '--deployments', file],
    { GRAPHRUN_OPERATOR_TOKEN: OPERATOR, ...env },
    OPERATOR_ENV,
  );

/** `graphrun <args>` as a client of the server; its exit code and output. */
async function cli(args: string[], env: Record<string, string> = { GRAPHRUN_OPERATOR_TOKEN: OPERATOR }) {
  const child = spawnCli(args, { GRAPHRUN_URL: url, ...env }, OPERATOR_ENV);
  const code = await child.exited;
  return { code, ...child.output() };
}

/** A GET with its Host header set (fetch sends the URL's own), as a client of `<id>.run.test` would send it. */
function getAtHost(path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { headers: { ...headers, host } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const operator = { authorization: `Bearer ${OPERATOR}` };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-cli-deployments-'));
  data = join(dir, 'data');
  file = join(dir, 'deployments.json');
  await writeFile(file, JSON.stringify(FILE));
  server = serve();
  url = await server.url;
}, SPAWN_TIMEOUT);

afterAll(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('graphrun serve --deployments', () => {
  it('starts each deployment on its own storage and logs one line for each', async () => {
    const stderr = server!.output().stderr;
    expect(stderr).toContain(`graphrun: deployment default at / (any address naming no deployment), /deployment/default/, default.run.test:`);
    expect(stderr).toContain(
      `graphrun: deployment sdxl at /deployment/sdxl/, sdxl.run.test: jobs in process on 1 thread(s); SQLite ${join(data, 'deployments', 'sdxl', 'graphrun.db')}, blobs in ${join(data, 'deployments', 'sdxl', 'blobs')}`,
    );
    expect(stderr).toContain('graphrun: deployment beta (staging) at /deployment/beta/, beta.stg.run.test: jobs in process on 1 thread(s);');
    expect(stderr).toContain(`graphrun: deployment pool at /deployment/pool/, pool.run.test: jobs on 1 worker(s) ${DEAD_WORKER};`);
    expect((await readdir(join(data, 'deployments'))).sort()).toEqual(['beta', 'pool', 'sdxl']);
    expect(await readdir(join(data, 'deployments', 'sdxl'))).toEqual(expect.arrayContaining(['graphrun.db', 'blobs']));
  });

  it("runs a job submitted at /deployment/sdxl/: it is sdxl's alone, and its host reaches it", { timeout: SPAWN_TIMEOUT }, async () => {
    const base = `${url}/deployment/sdxl`;
    const asset = await uploadPng(base);
    const id = await submitInvert(base, asset.id);
    const job = await jobWhenDone(base, id);
    // Its output's link leads back through the deployment's prefix.
    expect(await outputPixels(base, job)).toEqual(INVERTED_RGBA);
    expect(job.outputs[0].url).toContain('/deployment/sdxl/');

    // Not the default deployment's, nor the staging one's.
    expect((await fetch(`${url}/api/v2/jobs/${id}`)).status).toBe(404);
    expect((await fetch(`${url}/deployment/beta/api/v2/jobs/${id}`)).status).toBe(404);
    // By host: the same job; a production id on the staging domain is no deployment.
    expect(await getAtHost(`/api/v2/jobs/${id}`, 'sdxl.run.test')).toMatchObject({ status: 200, body: { id, status: 'succeeded' } });
    expect(await getAtHost('/ops/deployment', 'beta.stg.run.test', operator)).toMatchObject({ status: 200, body: { id: 'beta', state: 'ready' } });
    expect((await getAtHost(`/api/v2/jobs/${id}`, 'sdxl.stg.run.test')).status).toBe(404);
    expect((await fetch(`${url}/deployment/nope/api/v2/jobs/${id}`)).status).toBe(404);
  });

  it('graphrun deployments lists them; stop makes the API answer 422 deployment_stopped; start brings it back', {
    timeout: SPAWN_TIMEOUT * 4,
  }, async () => {
    const [listed, asJson] = await Promise.all([cli(['deployments']), cli(['deployments', 'list', '--json'])]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+STAGE\s+STATE\s+ENGINE\s+DETAIL$/m);
    expect(listed.stdout).toMatch(/^default\s+production\s+ready\s+local ready$/m);
    expect(listed.stdout).toMatch(/^sdxl\s+production\s+ready\s+local ready$/m);
    expect(listed.stdout).toMatch(/^beta\s+staging\s+ready\s+local ready$/m);
    expect(listed.stdout).toMatch(/^pool\s+production\s+not_ready\s+/m);
    const ids = JSON.parse(asJson.stdout).deployments.map((d: { id: string }) => d.id);
    expect(ids).toEqual(['default', 'sdxl', 'beta', 'pool']);

    const stopped = await cli(['deployments', 'stop', 'sdxl']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/^deployment sdxl stopped/);
    const refused = await fetch(`${url}/deployment/sdxl/api/v2/jobs`);
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as any).error.code).toBe('deployment_stopped');
    expect((await getAtHost('/api/v2/jobs', 'sdxl.run.test')).status).toBe(422);
    // The others go on.
    expect((await fetch(`${url}/api/v2/jobs`)).status).toBe(200);
    expect((await fetch(`${url}/deployment/beta/api/v2/jobs`)).status).toBe(200);
    expect((await cli(['deployments'])).stdout).toMatch(/^sdxl\s+production\s+stopped\s+local ready\s+stopped by an operator at /m);

    const started = await cli(['deployments', 'start', 'sdxl']);
    expect(started).toMatchObject({ code: 0, stdout: 'deployment sdxl started (ready)\n' });
    expect((await fetch(`${url}/deployment/sdxl/api/v2/jobs`)).status).toBe(200);

    // 'default' is the one at the root.
    expect((await cli(['deployments', 'stop', 'default'])).code).toBe(0);
    expect((await fetch(`${url}/api/v2/jobs`)).status).toBe(422);
    expect((await fetch(`${url}/deployment/sdxl/api/v2/jobs`)).status).toBe(200);
    expect((await cli(['deployments', 'start', 'default'])).code).toBe(0);
    expect((await fetch(`${url}/api/v2/jobs`)).status).toBe(200);
  });

  it('refusals exit 1 with the server error; a bad id exits 2 before any request', { timeout: SPAWN_TIMEOUT * 2 }, async () => {
    const [unknown, wrongToken, badId] = await Promise.all([
      cli(['deployments', 'stop', 'nope']),
      cli(['deployments', 'stop', 'sdxl'], { GRAPHRUN_OPERATOR_TOKEN: 'wrong' }),
      cli(['deployments', 'stop', 'SDXL']),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not_found: No deployment "nope" here/);
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toMatch(/unauthorized/);
    expect(badId.code).toBe(2);
    expect(badId.stderr).toMatch(/The deployment id must be one lower-case DNS label/);
    // Pointed at one deployment's own address, a command naming another stops nothing.
    const elsewhere = await cli(['deployments', 'stop', 'default', '--url', `${url}/deployment/sdxl`]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/is the deployment "sdxl", not "default"/);
    expect((await fetch(`${url}/deployment/sdxl/api/v2/jobs`)).status).toBe(200);
  });

  it("graphrun servers --deployment reaches that deployment's pool", { timeout: SPAWN_TIMEOUT * 2 }, async () => {
    const [pool, sdxl, root] = await Promise.all([
      cli(['servers', 'list', '--deployment', 'pool', '--json']),
      cli(['servers', 'list', '--deployment', 'sdxl']),
      cli(['servers', 'list', '--json']),
    ]);
    expect(pool.code, pool.stderr).toBe(0);
    expect(JSON.parse(pool.stdout)).toMatchObject({ servers: [], configured: [{ url: DEAD_WORKER }] });
    expect(sdxl.code, sdxl.stderr).toBe(0);
    expect(sdxl.stdout).toMatch(/^ID\s+URL\s+STATE\s+LIVE$/m);
    expect(JSON.parse(root.stdout)).toMatchObject({ servers: [], configured: [] });
    const missing = await cli(['servers', 'list', '--deployment', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No deployment "nope" here/);
  });

  it('a restart keeps a deployment stopped', { timeout: SPAWN_TIMEOUT * 3 }, async () => {
    expect((await cli(['deployments', 'stop', 'beta'])).code).toBe(0);
    expect(await server!.stop()).toBe(0);
    server = serve();
    url = await server.url;
    const listed = await cli(['deployments']);
    expect(listed.stdout).toMatch(/^beta\s+staging\s+stopped\s+/m);
    expect(listed.stdout).toMatch(/^sdxl\s+production\s+ready\s+/m);
    expect((await fetch(`${url}/deployment/beta/api/v2/jobs`)).status).toBe(422);
    expect((await cli(['deployments', 'start', 'beta'])).code).toBe(0);
    expect((await fetch(`${url}/deployment/beta/api/v2/jobs`)).status).toBe(200);
  });
});

describe('a bad deployments file', () => {
  it.each([
    ['an unknown key', { deployments: [{ id: 'sdxl', gpu: 2 }] }, /deployments\[0\] has an unknown key "gpu"/],
    ['a bad id', { deployments: [{ id: 'SDXL' }] }, /deployments\[0\]\.id must be one lower-case DNS label/],
    ['a bad worker URL', { deployments: [{ id: 'sdxl', workers: ['gpu-1:8188'] }] }, /deployments\[0\]\.workers\[0\] must be an http\(s\) URL/],
  ])('exits 2 for %s, naming the file and the entry', { timeout: SPAWN_TIMEOUT }, async (_, content, message) => {
    const path = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(path, JSON.stringify(content));
    const child = spawnCli(['serve', '--port', '0', '--data', join(dir, 'never')], { GRAPHRUN_DEPLOYMENTS: path }, OPERATOR_ENV);
    expect(await child.exited).toBe(2);
    expect(child.output().stderr).toContain(`graphrun: GRAPHRUN_DEPLOYMENTS ${path}: `);
    expect(child.output().stderr).toMatch(message);
  });

  it('exits 2 for a file that is not there', { timeout: SPAWN_TIMEOUT }, async () => {
    const child = spawnCli(['runner', '--data', join(dir, 'never'), '--deployments', join(dir, 'missing.json')], {}, OPERATOR_ENV);
    expect(await child.exited).toBe(2);
    expect(child.output().stderr).toContain(`graphrun: --deployments: cannot read ${join(dir, 'missing.json')}: no such file.`);
  });
});
