// GET /ops/status (operator token): the fleet as the dashboard's operator
// panel shows it. The shape is the panel's contract: keep it.
import type { ServiceContext } from '../context.ts';
import { deploymentView } from '../deployments/ops.ts';
import { collectOps } from './collect.ts';
import { requireOperator } from './operator-auth.ts';

export async function opsStatus(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperator(request, ctx);
  const s = await collectOps(ctx);
  const body = {
    ready: s.ready,
    deployment: deploymentView(ctx),
    engine: {
      name: s.engine.name,
      readiness: s.engine.readiness,
      servers: (s.engine.servers ?? []).map(({ url, healthy, busy, slots }) => ({ url, healthy, busy, slots })),
    },
    queues: s.queues,
    instance: { run_jobs: s.instance.run_jobs, sse_streams: s.instance.sse_streams, websockets: s.instance.websockets },
  };
  return Response.json(body, { headers: { 'Cache-Control': 'no-store' } });
}
