// `graphrun servers list|add|drain|remove` against a real server whose worker
// engine starts with no engine server: the CLI's source on pipes, with the
// operator token from GRAPHRUN_OPERATOR_TOKEN or --operator-token; exit 0 on
// success, 1 for the server's refusal (its error shown), 2 for a usage
// mistake.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runClient } from '../adapters/node/client/program.ts';
import { type CliProcess, spawnCli } from './helpers/cli.ts';
import { type FakePool, OPERATOR, type PoolService, startFakePool, startPoolService } from './helpers/server-pool.ts';

/** Each CLI started runs its source through tsx, seconds of CPU on a busy machine. */
const SPAWN_TIMEOUT = 60_000;
const UNSET = ['GRAPHRUN_URL', 'GRAPHRUN_TOKEN', 'GRAPHRUN_OPERATOR_TOKEN'];
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

let pool: FakePool;
let s: PoolService;
beforeAll(async () => {
  pool = await startFakePool(1);
  s = await startPoolService('node-server');
});
afterAll(async () => {
  await s?.close();
  await pool?.close();
});

async function cli(args: string[], env: Record<string, string> = { GRAPHRUN_OPERATOR_TOKEN: OPERATOR }) {
  const child: CliProcess = spawnCli(['servers', ...args], { GRAPHRUN_URL: s.base, ...env }, UNSET);
  const code = await child.exited;
  return { code, ...child.output() };
}

it("adds, lists, drains and removes a server; refusals exit 1 with the server's error", { timeout: SPAWN_TIMEOUT * 4 }, async () => {
  const url = pool.workers[0].url;
  const added = await cli(['add', `${url}/`]);
  expect(added.code, added.stderr).toBe(0);
  const id = new RegExp(`^server (${UUID}) ${url} added \\(active\\)$`, 'm').exec(added.stdout)![1];
  expect(s.engine.servers().map((x) => x.url)).toEqual([url]);

  const [listed, asJson] = await Promise.all([cli(['list']), cli(['list', '--json'])]);
  expect(listed.stdout).toMatch(/^ID\s+URL\s+STATE\s+LIVE$/m);
  expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+${url}\\s+active\\s+(healthy|unhealthy) \\d/1$`, 'm'));
  expect(JSON.parse(asJson.stdout)).toMatchObject({ servers: [{ id, url, state: 'active' }], configured: [] });

  // The flag, over a wrong variable.
  const drained = await cli(['drain', id, '--operator-token', OPERATOR], { GRAPHRUN_OPERATOR_TOKEN: 'wrong' });
  expect(drained.code, drained.stderr).toBe(0);
  expect(drained.stdout).toContain(`server ${id} ${url} draining`);
  expect(s.engine.servers()[0].state).toBe('draining');

  const [removed, refused] = await Promise.all([cli(['remove', id]), cli(['add', url], { GRAPHRUN_OPERATOR_TOKEN: 'wrong' })]);
  expect(removed).toMatchObject({ code: 0, stdout: `server ${id} removed\n` });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/unauthorized/);
  expect(s.engine.servers()).toEqual([]);

  const again = await cli(['remove', id]);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/not_found/);
});

it('usage mistakes exit 2 before any request', async () => {
  for (const args of [
    ['servers', 'add'],
    ['servers', 'drain', 'a', 'b'],
    ['servers', 'list', '--token', 'x'],
    ['servers', 'list', '--url', 'ftp://x'],
    ['servers', 'list', '--operator-token', ''],
  ]) {
    expect(await runClient(args, {}), args.join(' ')).toBe(2);
  }
});
