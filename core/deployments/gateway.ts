// createDeploymentGateway: several deployments behind one `fetch`. Each
// deployment is a whole service (createService with its `deploymentId`): its
// own engine (in process, or a pool of engine servers) and so its own node
// definitions, its own storage (so its jobs, assets and events are its own by
// construction, and nothing one deployment does can read or stall another's
// queue), its own condition. The gateway only finds the deployment a request
// names (address.ts) and hands the request over, with the path prefix that
// named it as part of the mount prefix, so every link the deployment builds
// leads back to it. It adds one route of its own: GET /ops/deployments, every
// deployment's /ops/deployment in one list.
import { markOwnService } from '../own-services.ts';
import type { FetchOptions, RefusalStatus, Service, SweepResult, WebSocketHooks, WsPeer } from '../types.ts';
import { type Address, type AddressBook, addressOf, checkDomain } from './address.ts';
import { DEPLOYMENT_ID } from './condition.ts';
import { checkPathPrefix } from './path-prefix.ts';

export interface GatewayDeployment {
  /** A service made with `deploymentId` set (its id is the deployment's address). */
  service: Service;
  /** Addressed on the staging domains instead of the base ones. */
  staging?: boolean;
}

export interface DeploymentGatewayOptions {
  deployments: GatewayDeployment[];
  /** `{id}.{domain}` addresses a production deployment, e.g. run.example.com. */
  baseDomains?: string[];
  /** `{id}.{domain}` addresses a staging deployment, e.g. stg.run.example.com. */
  stagingDomains?: string[];
  /** The path prefix that addresses a deployment (`/deployment/{id}/...`); false: by host only. Default '/deployment'. */
  pathPrefix?: string | false;
  /**
   * The deployment that answers requests naming none (today's URLs): default
   * the one whose id is 'default'; null: such requests get 404.
   */
  fallback?: string | null;
}

/** The service a request went to, and what it was given, kept for the WebSocket's later hooks. */
interface Routed {
  service: Service;
  request: Request;
  context: unknown;
}

/** The URL with another path (the one under a deployment's prefix). */
function withPath(url: URL, path: string): URL {
  url.pathname = path;
  return url;
}

export function createDeploymentGateway(options: DeploymentGatewayOptions): Service {
  const byId = new Map<string, Service>();
  const production = new Set<string>();
  const staging = new Set<string>();
  for (const { service, staging: isStaging } of options.deployments) {
    const id = service.deploymentId;
    if (id === undefined || !DEPLOYMENT_ID.test(id)) throw new TypeError('Every deployment of a gateway must be a service made by createService.');
    if (byId.has(id)) throw new TypeError(`Two deployments have the id "${id}": each needs its own.`);
    byId.set(id, service);
    (isStaging ? staging : production).add(id);
  }
  const fallbackId = options.fallback === undefined ? (byId.has('default') ? 'default' : null) : options.fallback;
  if (fallbackId !== null && !byId.has(fallbackId)) throw new TypeError(`The fallback deployment "${fallbackId}" is not one of the gateway's.`);
  const fallback = fallbackId === null ? undefined : byId.get(fallbackId);
  const book: AddressBook = {
    production,
    staging,
    baseDomains: (options.baseDomains ?? []).map((d) => checkDomain(d, 'baseDomains')),
    stagingDomains: (options.stagingDomains ?? []).map((d) => checkDomain(d, 'stagingDomains')),
    pathPrefix: checkPathPrefix(options.pathPrefix),
  };
  // Refusals need a surface's error shape, which any deployment's service can render.
  const renderer = fallback ?? byId.values().next().value;
  if (renderer === undefined) throw new TypeError('A deployment gateway needs at least one deployment.');

  const address = (url: URL): Address => addressOf(book, url.hostname, url.pathname);

  /** The request as the deployment sees it: without the path prefix that named it. */
  function rewrite(request: Request, a: Extract<Address, { kind: 'path' }>): Request {
    const url = withPath(new URL(request.url), a.rest);
    const body = request.method === 'GET' || request.method === 'HEAD' ? null : request.body;
    return new Request(url, { method: request.method, headers: request.headers, body, signal: request.signal, duplex: 'half' } as RequestInit);
  }

  function unknown(request: Request, a: Extract<Address, { kind: 'unknown' }>): Response {
    const kind = a.staging ? 'staging deployment' : 'deployment';
    return renderer!.refuse(404, `No ${kind} "${a.id}" here.`, new Request(withPath(new URL(request.url), a.rest), { method: request.method }));
  }

  /** Where a request goes: a service and the request and options to give it, or a refusal. */
  function route(
    request: Request,
    options?: FetchOptions,
    url = new URL(request.url),
  ): { service: Service; request: Request; options?: FetchOptions } | Response {
    const a = address(url);
    if (a.kind === 'unknown') return unknown(request, a);
    if (a.kind === 'host') return { service: byId.get(a.id)!, request, options };
    if (a.kind === 'path') {
      const mountPrefix = `${(options?.mountPrefix ?? '').replace(/\/+$/, '')}${a.prefix}`;
      return { service: byId.get(a.id)!, request: rewrite(request, a), options: { ...options, mountPrefix } };
    }
    if (fallback === undefined) return renderer!.refuse(404, 'Name a deployment: by its host or its path prefix.', request);
    return { service: fallback, request, options };
  }

  /** GET /ops/deployments (at the root): each deployment's own /ops/deployment, asked with the caller's credentials. */
  async function listDeployments(request: Request): Promise<Response> {
    const headers = new Headers();
    const auth = request.headers.get('authorization');
    if (auth !== null) headers.set('authorization', auth);
    const origin = new URL(request.url).origin;
    const views: unknown[] = [];
    for (const [id, service] of byId) {
      const response = await service.fetch(new Request(`${origin}/ops/deployment`, { headers }));
      // A refusal (no token, a wrong one) is every deployment's: the first one answers for all.
      if (!response.ok) return response;
      views.push({ ...((await response.json()) as object), staging: staging.has(id), fallback: id === fallbackId });
    }
    return Response.json({ deployments: views }, { headers: { 'Cache-Control': 'no-store' } });
  }

  const wrapped = new WeakMap<WsPeer, WsPeer>();
  /** The peer as the deployment's hooks see it: its own request and the context its upgrade gave. */
  function inner(peer: WsPeer): [Service, WsPeer] | null {
    const routed = peer.context as Routed | undefined;
    if (!routed?.service) return null;
    let p = wrapped.get(peer);
    if (p === undefined) {
      p = {
        id: peer.id,
        request: routed.request,
        context: routed.context,
        send: (data) => peer.send(data),
        close: (code, reason) => peer.close(code, reason),
        ...(peer.bufferedAmount && { bufferedAmount: () => peer.bufferedAmount!() }),
      };
      wrapped.set(peer, p);
    }
    return [routed.service, p];
  }

  const websocket: WebSocketHooks = {
    async upgrade(request) {
      const target = route(request);
      if (target instanceof Response) return target;
      const answer = await target.service.websocket.upgrade(target.request);
      if (answer instanceof Response) return answer;
      const context: Routed = { service: target.service, request: target.request, context: answer.context };
      return { accept: true, context };
    },
    open(peer) {
      const found = inner(peer);
      if (found) found[0].websocket.open(found[1]);
      else peer.close(1011, 'no deployment');
    },
    message(peer, data) {
      const found = inner(peer);
      if (found) found[0].websocket.message(found[1], data);
    },
    close(peer, code, reason) {
      const found = inner(peer);
      if (found) found[0].websocket.close(found[1], code, reason);
    },
  };

  const services = () => [...byId.values()];
  const gateway: Service = {
    fetch(request, fetchOptions) {
      const url = new URL(request.url);
      if (request.method === 'GET' && url.pathname === '/ops/deployments' && address(url).kind === 'none') return listDeployments(request);
      const target = route(request, fetchOptions, url);
      if (target instanceof Response) return Promise.resolve(target);
      return target.service.fetch(target.request, target.options);
    },
    websocket,
    refuse(status: RefusalStatus, message?: string, request?: Request) {
      if (request === undefined) return renderer!.refuse(status, message);
      const url = new URL(request.url);
      const a = address(url);
      // Only the path and method choose the shape: a bodiless copy, as the body may be read already (or locked).
      const under = (path: string) => new Request(withPath(url, path), { method: request.method, headers: request.headers });
      // A request for no deployment here still gets the adapter's refusal, in the shape the path it names calls for.
      if (a.kind === 'unknown') return renderer!.refuse(status, message, under(a.rest));
      if (a.kind === 'path') return byId.get(a.id)!.refuse(status, message, under(a.rest));
      if (a.kind === 'host') return byId.get(a.id)!.refuse(status, message, request);
      return (fallback ?? renderer!).refuse(status, message, request);
    },
    async sweep() {
      const results = await Promise.all(services().map((s) => s.sweep()));
      const total: SweepResult = { expired: 0, blobs_removed: 0, jobs_expired: 0, orphans_removed: 0 };
      for (const r of results) for (const k of Object.keys(total) as Array<keyof SweepResult>) total[k] += r[k];
      return total;
    },
    idle: async () => void (await Promise.all(services().map((s) => s.idle()))),
    close: async () => void (await Promise.all(services().map((s) => s.close()))),
  };
  // It reads a request's method, url, headers, signal and body, as the services it holds do.
  return markOwnService(gateway);
}
