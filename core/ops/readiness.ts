// GET and HEAD /readyz: whether a load balancer should send this instance
// traffic. Ready when the metadata store answers a ping (bounded well under
// Kubernetes' default 1 s probe timeout, so a hung database reads as not
// ready) and the engine is ready (for a pool, some server is healthy); a
// service that is closing is not ready either (service.ts answers for it).
// No auth, no cache; 503 with Retry-After and what failed otherwise. The
// answer names no host: the probe is often reachable from outside.
import type { ServiceContext } from '../context.ts';
import { checkEngine, checkStorage, type EngineCheck, type StorageCheck } from './checks.ts';

/** How long the storage ping may take. */
export const READY_TIMEOUT_MS = 800;
const RETRY_AFTER_SECONDS = '5';
const NO_STORE = { 'Cache-Control': 'no-store' };

export interface ReadinessBody {
  status: 'ready' | 'not_ready';
  checks: { storage?: StorageCheck; engine?: EngineCheck; service?: { ok: false; detail: string } };
}

function answer(request: Request, body: ReadinessBody): Response {
  const ready = body.status === 'ready';
  const headers = ready ? NO_STORE : { ...NO_STORE, 'Retry-After': RETRY_AFTER_SECONDS };
  if (request.method === 'HEAD') return new Response(null, { status: ready ? 200 : 503, headers });
  return Response.json(body, { status: ready ? 200 : 503, headers });
}

export async function readyz(request: Request, ctx: ServiceContext): Promise<Response> {
  // The engine first: it is in memory, and its answer must not wait on a slow ping.
  const engine = checkEngine(ctx.engine);
  const storage = await checkStorage(ctx, READY_TIMEOUT_MS);
  return answer(request, { status: storage.ok && engine.ok ? 'ready' : 'not_ready', checks: { storage, engine } });
}

/** Whether a request is a readiness probe (the closing service answers those in their own shape). */
export const isReadinessProbe = (request: Request, path: string) => path === '/readyz' && (request.method === 'GET' || request.method === 'HEAD');

/** /readyz of a service that is shutting down: not ready, whatever its parts say. */
export const closingReadiness = (request: Request): Response =>
  answer(request, { status: 'not_ready', checks: { service: { ok: false, detail: 'the service is shutting down' } } });
