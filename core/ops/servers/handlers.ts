// /ops/servers: the operator adds, drains and removes engine servers at run
// time. A change is stored first (so a restart and the other runners on the
// storage keep it, see sync.ts), then applied to this instance's engine at
// once, then announced on the event bus.
//
// Reading is open like /ops/status when the service has no operator token;
// changing is not: without a token configured these routes answer 403, since
// an open route that sends jobs (and their inputs) to any URL would hand the
// fleet to whoever reaches the port.
import type { ServiceContext } from '../../context.ts';
import { ApiError, notFound } from '../../errors.ts';
import { readJson } from '../../http/read-json.ts';
import { requireOperator, requireOperatorToChange } from '../operator-auth.ts';
import { serverUrlOf } from './server-url.ts';
import { liveView, serverView } from './view.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The store and the engine's pool methods, or 409 no_server_pool. */
function pool(ctx: ServiceContext) {
  const store = ctx.metadata.engineServers;
  const { engine } = ctx;
  if (!store || !engine.addServer || !engine.drainServer || !engine.removeServer) {
    throw new ApiError(
      'no_server_pool',
      store
        ? `The engine "${engine.name}" runs jobs in process: it has no pool of engine servers. Start the service with --worker <url> (the worker engine).`
        : 'This storage keeps no engine servers.',
    );
  }
  return { store, addServer: engine.addServer, drainServer: engine.drainServer, removeServer: engine.removeServer };
}

const liveOf = (ctx: ServiceContext) => new Map((ctx.engine.servers?.() ?? []).map((s) => [s.url, s]));

export async function listServers(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperator(request, ctx);
  const rows = (await ctx.metadata.engineServers?.listEngineServers(ctx.deployment.id)) ?? [];
  const live = liveOf(ctx);
  const stored = new Set(rows.map((r) => r.url));
  // Servers of the engine's own options (--worker) that were never registered here: shown, not changeable by id.
  const configured = [...live.values()].filter((s) => !stored.has(s.url)).map((s) => ({ url: s.url, ...liveView(s) }));
  return Response.json({ servers: rows.map((r) => serverView(r, live.get(r.url))), configured }, { headers: NO_STORE });
}

export async function addServer(request: Request, ctx: ServiceContext): Promise<Response> {
  await requireOperatorToChange(request, ctx, 'Changing engine servers');
  const p = pool(ctx);
  const url = serverUrlOf(await readJson(request));
  const { server, created } = await p.store.addEngineServer({ id: crypto.randomUUID(), deployment: ctx.deployment.id, url, now: ctx.now() });
  ctx.servers.adopt(server.url);
  p.addServer.call(ctx.engine, server.url);
  ctx.servers.changed();
  return Response.json(serverView(server, liveOf(ctx).get(server.url)), { status: created ? 201 : 200, headers: NO_STORE });
}

export async function drainServer(request: Request, ctx: ServiceContext, params: Record<string, string>): Promise<Response> {
  await requireOperatorToChange(request, ctx, 'Changing engine servers');
  const p = pool(ctx);
  const server = await p.store.setEngineServerState(params.id, 'draining', ctx.now());
  if (!server) throw notFound('No engine server has this id.');
  ctx.servers.adopt(server.url);
  // Not awaited: the drain settles when the prompts running there finish, which may take long.
  p.drainServer.call(ctx.engine, server.url).catch((err: unknown) => ctx.logger.warn('draining an engine server failed', { error: String(err) }));
  ctx.servers.changed();
  return Response.json(serverView(server, liveOf(ctx).get(server.url)), { status: 202, headers: NO_STORE });
}

export async function removeServer(request: Request, ctx: ServiceContext, params: Record<string, string>): Promise<Response> {
  await requireOperatorToChange(request, ctx, 'Changing engine servers');
  const p = pool(ctx);
  const server = await p.store.removeEngineServer(params.id);
  if (!server) throw notFound('No engine server has this id.');
  // Settles once the jobs running there let go of it (they run again elsewhere).
  await p.removeServer.call(ctx.engine, server.url);
  ctx.servers.changed();
  return new Response(null, { status: 204, headers: NO_STORE });
}
