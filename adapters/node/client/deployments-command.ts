// `graphrun deployments [list]|stop ID|start ID`: the deployments of a server
// started with --deployments (GET /ops/deployments), and the operator's two
// moves on one of them (POST /deployment/<id>/ops/deployment/stop|start;
// 'default' at the root). A server without --deployments is the one
// deployment 'default': list shows it, stop and start work on it.
import type { Api } from './api.ts';
import { apiErrorOf, ClientError, EXIT_OK } from './errors.ts';
import { deploymentIdOf, type OperatorFlags, operatorApi } from './operator-api.ts';
import { tableText } from './table.ts';

type Env = Record<string, string | undefined>;

interface DeploymentView {
  id: string;
  state: 'ready' | 'not_ready' | 'stopped';
  detail: string | null;
  engine: { name: string; state: string };
  /** Only in the gateway's list. */
  staging?: boolean;
}

const out = (text: string) => process.stdout.write(`${text}\n`);

export async function deploymentsList(flags: OperatorFlags, env: Env): Promise<number> {
  const api = operatorApi(flags, env);
  const res = await api.fetch('/ops/deployments');
  let deployments: DeploymentView[];
  if (res.status === 404) {
    // No gateway there: a service started without --deployments is one deployment, which says what it is itself.
    await res.body?.cancel();
    deployments = [await api.json<DeploymentView>('/ops/deployment')];
  } else if (!res.ok) {
    throw await apiErrorOf(res, 'GET /ops/deployments');
  } else {
    deployments = ((await res.json()) as { deployments: DeploymentView[] }).deployments;
  }
  if (flags.json) return (out(JSON.stringify({ deployments }, null, 2)), EXIT_OK);
  out(
    tableText([
      ['ID', 'STAGE', 'STATE', 'ENGINE', 'DETAIL'],
      ...deployments.map((d) => [d.id, d.staging ? 'staging' : 'production', d.state, `${d.engine.name} ${d.engine.state}`, d.detail ?? '']),
    ]),
  );
  return EXIT_OK;
}

/** The deployment that answers at the api's address must be the one named: --url may point at another's own host. */
async function checkIdentity(api: Api, id: string): Promise<void> {
  const { id: there } = await api.json<DeploymentView>('/ops/deployment');
  if (there !== id) {
    throw new ClientError(`${api.baseUrl} is the deployment "${there}", not "${id}": give the gateway's address as --url (or GRAPHRUN_URL).`);
  }
}

export async function deploymentsMove(move: 'stop' | 'start', id: string, flags: OperatorFlags, env: Env): Promise<number> {
  const api = operatorApi(flags, env, deploymentIdOf(id, 'The deployment id'));
  await checkIdentity(api, id);
  const view = await api.json<DeploymentView>(`/ops/deployment/${move}`, { method: 'POST' });
  if (flags.json) out(JSON.stringify(view, null, 2));
  else if (move === 'stop')
    out(`deployment ${view.id} stopped: its API answers 422 deployment_stopped and it starts no job until "graphrun deployments start ${view.id}"`);
  else out(`deployment ${view.id} started (${view.state}${view.detail ? `: ${view.detail}` : ''})`);
  return EXIT_OK;
}
