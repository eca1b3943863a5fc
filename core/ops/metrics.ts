// GET /metrics (operator token): the Prometheus text exposition. The
// fleet's gauges come from collect.ts at scrape time (jobs by status and
// tier, queue depth and the oldest queued job's age per tier: the
// autoscaling signals; engine servers), this instance's counters and
// histograms from its registry (instance-metrics.ts), and the runtime's
// process metrics from ServiceOptions.metrics when the adapter gives them.
// A storage that does not answer leaves the job families out (an absent
// series is Prometheus' "unknown") and reads graphrun_ready 0.
import type { EngineServerStatus } from '../../engine/types.ts';
import type { ServiceContext } from '../context.ts';
import { errorText } from '../log.ts';
import { gaugeFamily, type MetricFamily, PROMETHEUS_CONTENT_TYPE, renderFamilies } from '../metrics/text-format.ts';
import { COUNTED_STATUSES, collectOps, type OpsSnapshot } from './collect.ts';
import { requireOperator } from './operator-auth.ts';

function jobFamilies(s: OpsSnapshot): MetricFamily[] {
  if (!s.storage.ok) return [];
  const count = new Map(s.jobs.map((r) => [`${r.tier}\n${r.status}`, r.count]));
  const tiers = s.queues.map((q) => q.tier);
  return [
    gaugeFamily(
      'graphrun_jobs',
      'Jobs in storage by status and account tier (all instances; expired jobs left out).',
      // Every status of every tier that has jobs, zeros included, so a series does not vanish when it empties.
      tiers.flatMap((tier) => COUNTED_STATUSES.map((status) => ({ labels: { status, tier }, value: count.get(`${tier}\n${status}`) ?? 0 }))),
    ),
    gaugeFamily(
      'graphrun_queue_depth',
      'Queued jobs per account tier (all instances).',
      s.queues.map((q) => ({ labels: { tier: q.tier }, value: q.queued })),
    ),
    gaugeFamily(
      'graphrun_queue_oldest_age_seconds',
      'How long the oldest queued job of each account tier has waited; 0 when none is queued.',
      s.queues.map((q) => ({ labels: { tier: q.tier }, value: q.oldest_queued_seconds ?? 0 })),
    ),
  ];
}

/** The deployment's condition as a state set: one series per condition, 1 for the one it is in. */
function deploymentFamily(ctx: ServiceContext): MetricFamily {
  const { state } = ctx.deployment.current();
  return gaugeFamily(
    'graphrun_deployment_condition',
    'The condition of this deployment: 1 for the one it is in (ready, not_ready, stopped), 0 for the others.',
    (['ready', 'not_ready', 'stopped'] as const).map((c) => ({
      labels: { deployment: ctx.deployment.id, condition: c },
      value: c === state ? 1 : 0,
    })),
  );
}

function engineFamilies(s: OpsSnapshot): MetricFamily[] {
  const servers = s.engine.servers;
  const families = [gaugeFamily('graphrun_engine_ready', 'Whether the engine is ready (1) or not (0).', [{ value: s.engine.check.ok ? 1 : 0 }])];
  if (servers === undefined) return families;
  const per = (pick: (x: EngineServerStatus) => number) => servers.map((x) => ({ labels: { server: x.url }, value: pick(x) }));
  return [
    ...families,
    gaugeFamily(
      'graphrun_engine_server_healthy',
      'Whether the engine server answers its health checks (1) or not (0).',
      per((x) => (x.healthy ? 1 : 0)),
    ),
    gaugeFamily(
      'graphrun_engine_server_busy',
      'Prompts of this instance an engine server runs or holds.',
      per((x) => x.busy),
    ),
    gaugeFamily(
      'graphrun_engine_server_slots',
      'Prompts of this instance an engine server may hold at once.',
      per((x) => x.slots),
    ),
  ];
}

export async function metrics(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperator(request, ctx);
  const s = await collectOps(ctx);
  const families: MetricFamily[] = [
    gaugeFamily('graphrun_ready', 'Whether this instance is ready (1: its storage answers and its engine is ready) or not (0).', [
      { value: s.ready ? 1 : 0 },
    ]),
    ...jobFamilies(s),
    ...engineFamilies(s),
    deploymentFamily(ctx),
    gaugeFamily('graphrun_jobs_running_here', 'Jobs this instance is running now.', [{ value: s.instance.jobs_running }]),
    gaugeFamily('graphrun_sse_streams', 'Job event streams (SSE) open on this instance.', [{ value: s.instance.sse_streams }]),
    ...ctx.metrics.registry.families(),
  ];
  let text = renderFamilies(families);
  const extra = ctx.metrics.extra;
  if (extra) {
    try {
      const more = await extra.collect();
      text += more.endsWith('\n') || more === '' ? more : `${more}\n`;
    } catch (err) {
      // The service's own metrics are worth more than nothing: the scrape goes on without the runtime's.
      ctx.logger.warn('collecting the runtime metrics failed', { error: errorText(err) });
    }
  }
  return new Response(text, { headers: { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Cache-Control': 'no-store' } });
}
