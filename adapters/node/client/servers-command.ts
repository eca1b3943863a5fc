// `graphrun servers list|add URL|drain ID|remove ID`: the operator's
// /ops/servers, the engine servers of a running service's pool (with
// --deployment, of that deployment's). They take the operator token
// (operator-api.ts), not an account key: the server refuses changes without it.
import { apiErrorOf, EXIT_OK } from './errors.ts';
import { deploymentIdOf, type OperatorFlags, operatorApi } from './operator-api.ts';
import { tableText } from './table.ts';

export interface ServersFlags extends OperatorFlags {
  /** A deployment of a deployment gateway: its servers instead of the default deployment's. */
  deployment?: string;
}

type Env = Record<string, string | undefined>;

interface Live {
  healthy: boolean;
  busy: number;
  slots: number;
  state: string;
}
interface Registered {
  id: string;
  url: string;
  state: string;
  live: Live | null;
}

const apiOf = (flags: ServersFlags, env: Env) =>
  operatorApi(flags, env, flags.deployment === undefined ? undefined : deploymentIdOf(flags.deployment, '--deployment'));

const out = (text: string) => process.stdout.write(`${text}\n`);
const liveText = (l: Live | null) => (l ? `${l.healthy ? 'healthy' : 'unhealthy'} ${l.busy}/${l.slots}` : 'not in this pool');

export async function serversList(flags: ServersFlags, env: Env): Promise<number> {
  const body = await apiOf(flags, env).json<{ servers: Registered[]; configured: Array<Live & { url: string }> }>('/ops/servers');
  if (flags.json) return (out(JSON.stringify(body, null, 2)), EXIT_OK);
  const rows = [
    ['ID', 'URL', 'STATE', 'LIVE'],
    ...body.servers.map((s) => [s.id, s.url, s.state, liveText(s.live)]),
    // Configured with --worker, not registered: no id to drain or remove them by.
    ...body.configured.map((s) => ['(configured)', s.url, s.state, liveText(s)]),
  ];
  out(tableText(rows));
  return EXIT_OK;
}

export async function serversAdd(url: string, flags: ServersFlags, env: Env): Promise<number> {
  const api = apiOf(flags, env);
  const res = await api.fetch('/ops/servers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  if (!res.ok) throw await apiErrorOf(res, 'POST /ops/servers');
  const server = (await res.json()) as Registered;
  if (flags.json) out(JSON.stringify(server, null, 2));
  else out(`server ${server.id} ${server.url} ${res.status === 201 ? 'added' : 'already registered'} (${server.state})`);
  return EXIT_OK;
}

export async function serversDrain(id: string, flags: ServersFlags, env: Env): Promise<number> {
  const server = await apiOf(flags, env).json<Registered>(`/ops/servers/${encodeURIComponent(id)}/drain`, { method: 'POST' });
  if (flags.json) out(JSON.stringify(server, null, 2));
  else out(`server ${server.id} ${server.url} draining: it finishes what it runs and takes no new job`);
  return EXIT_OK;
}

export async function serversRemove(id: string, flags: ServersFlags, env: Env): Promise<number> {
  const path = `/ops/servers/${encodeURIComponent(id)}`;
  const res = await apiOf(flags, env).fetch(path, { method: 'DELETE' });
  if (!res.ok) throw await apiErrorOf(res, `DELETE ${path}`);
  out(`server ${id} removed`);
  return EXIT_OK;
}
