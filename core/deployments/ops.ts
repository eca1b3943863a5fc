// /ops/deployment: the deployment this service is, its condition, and the
// operator's two moves. Stop: the deployment takes no request of its API
// surfaces (422 deployment_stopped) and starts no job; jobs running finish,
// queued ones wait. Start: it answers again, ready or not ready as its
// engine is. Both are stored, so a restart and every instance on the storage
// keep them. Reading is open like /ops/status when the service has no
// operator token; the moves always need one.
import type { ServiceContext } from '../context.ts';
import { requireOperator, requireOperatorToChange } from '../ops/operator-auth.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

export interface DeploymentView {
  id: string;
  state: 'ready' | 'not_ready' | 'stopped';
  detail: string | null;
  engine: { name: string; state: string };
}

export function deploymentView(ctx: ServiceContext): DeploymentView {
  const { state, detail } = ctx.deployment.current();
  return { id: ctx.deployment.id, state, detail: detail ?? null, engine: { name: ctx.engine.name, state: ctx.engine.readiness().state } };
}

export async function getDeployment(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperator(request, ctx);
  return Response.json(deploymentView(ctx), { headers: NO_STORE });
}

export async function stopDeployment(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperatorToChange(request, ctx, 'Stopping a deployment');
  await ctx.deployment.stop();
  return Response.json(deploymentView(ctx), { headers: NO_STORE });
}

export async function startDeployment(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperatorToChange(request, ctx, 'Starting a deployment');
  await ctx.deployment.start();
  return Response.json(deploymentView(ctx), { headers: NO_STORE });
}
