// The deployment tests' gateway: several deployments (each a whole service
// made with `deploymentId`, on its own storage, with an engine whose
// readiness the test sets and a `Hold` node that runs until the test lets it
// go) behind createDeploymentGateway, in process through `fetch` or through a
// real Node server (`serve`, optionally under an adapter mount prefix).
// `at(...)` gives a Harness-shaped client addressed one way (host, staging
// host, path prefix, or none: the fallback), so the jobs/assets helpers work
// on it unchanged. Through the real server, host addressing sends the real
// Host header (Node's fetch cannot: it uses node:http for those).
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { serve } from '../../adapters/node/server.ts';
import { defineNode } from '../../engine/local/define-node.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import { type Engine, EngineNotReadyError, type EngineReadiness } from '../../engine/types.ts';
import { createDeploymentGateway, createService, type DefaultServiceOptions, type Service, silentLogger } from '../../index.ts';
import { createMemoryStorage } from '../../storage/memory/index.ts';
import type { Harness, Mode } from './harness.ts';
import { createTestNodes } from './local-nodes.ts';

export const BASE_DOMAIN = 'run.example.com';
export const STAGING_DOMAIN = 'stg.run.example.com';
export const OPERATOR = 'op-secret';
export const opAuth = (token = OPERATOR) => ({ authorization: `Bearer ${token}` });

/** Holds of the `Hold` node: each key runs until released; `started` says it is running. */
export interface Holds {
  started(key: string): Promise<void>;
  release(key: string): void;
  /** run() calls per key. */
  runs: Record<string, number>;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function createHolds() {
  const entries = new Map<string, { started: ReturnType<typeof deferred>; release: ReturnType<typeof deferred> }>();
  const entry = (key: string) => {
    let e = entries.get(key);
    if (!e) entries.set(key, (e = { started: deferred(), release: deferred() }));
    return e;
  };
  const runs: Record<string, number> = {};
  const holds: Holds = {
    started: (key) => entry(key).started.promise,
    release: (key) => entry(key).release.resolve(),
    runs,
  };
  const node = defineNode({
    name: 'Hold',
    category: 'test',
    output_node: true,
    cacheable: false,
    required: { key: ['STRING', {}] },
    run: async ({ key }, ctx) => {
      const e = entry(String(key));
      runs[String(key)] = (runs[String(key)] ?? 0) + 1;
      e.started.resolve();
      await new Promise<void>((resolve, reject) => {
        e.release.promise.then(resolve);
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
      });
      return { outputs: [], ui: { text: [String(key)] } };
    },
  });
  return { holds, node };
}

/** A workflow of one Hold node: runs until `holds.release(key)`. */
export const holdWorkflow = (key: string) => ({ h: { class_type: 'Hold', inputs: { key } } });

/** A job that ends at once. */
export const quickWorkflow = (value = 1) => ({
  n: { class_type: 'Number', inputs: { value } },
  s: { class_type: 'Show', inputs: { value: ['n', 0] } },
});

export interface ControlledEngine {
  engine: Engine;
  holds: Holds;
  /**
   * What readiness() answers from now on; `definitions: false` (default true
   * when ready, kept otherwise) makes it an engine that knows no node class
   * yet: nodeDefinitions() and validate() throw EngineNotReadyError, as a
   * worker engine before its first server answers.
   */
  setReadiness(r: EngineReadiness, opts?: { definitions?: boolean }): void;
}

/** The local engine (built-in and test nodes, plus Hold) with a readiness the test sets; ready at first. */
export function controlledEngine(initial: EngineReadiness = { state: 'ready' }): ControlledEngine {
  const { holds, node } = createHolds();
  const local = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, node] });
  let readiness = initial;
  let definitions = true;
  const cold = () => new EngineNotReadyError('No engine server has answered yet, so the node classes are unknown. Try again shortly.');
  const engine: Engine = {
    ...local,
    readiness: () => readiness,
    nodeDefinitions: () => (definitions ? local.nodeDefinitions() : Promise.reject(cold())),
    validate: (w) => (definitions ? local.validate(w) : Promise.reject(cold())),
  };
  return {
    engine,
    holds,
    setReadiness(r, opts = {}) {
      readiness = r;
      definitions = opts.definitions ?? (r.state === 'ready' ? true : definitions);
    },
  };
}

export interface DeploymentSpec {
  id: string;
  staging?: boolean;
  /** Default: a fresh memory storage. */
  storage?: DefaultServiceOptions['storage'];
  /** Default OPERATOR; null: the service has no operator token. */
  operatorToken?: string | null;
  readiness?: EngineReadiness;
  /** Another engine than the controlled local one (e.g. a worker engine on fake servers). */
  engine?: Engine;
  options?: Partial<DefaultServiceOptions>;
}

export interface Deployment {
  id: string;
  service: Service;
  engine: ControlledEngine;
}

export async function startDeployment(spec: DeploymentSpec): Promise<Deployment> {
  const controlled = controlledEngine(spec.readiness);
  const engine: ControlledEngine = spec.engine
    ? {
        engine: spec.engine,
        holds: controlled.holds,
        setReadiness: () => {
          throw new Error('this deployment has an engine of its own');
        },
      }
    : controlled;
  if (spec.engine) await controlled.engine.close();
  const service = await createService({
    storage: spec.storage ?? createMemoryStorage(),
    logger: silentLogger,
    sweepIntervalMs: 0,
    progressIntervalMs: 0,
    deploymentId: spec.id,
    engine: engine.engine,
    ...(spec.operatorToken !== null && { operatorToken: spec.operatorToken ?? OPERATOR }),
    ...spec.options,
  });
  return { id: spec.id, service, engine };
}

/** How a client names a deployment. */
export type Addressing = { host: string } | { staging: string } | { path: string } | 'none';

export interface GatewayHarness {
  mode: Mode;
  gateway: Service;
  deployments: Record<string, Deployment>;
  /** The server's (or the fake in-process) origin, adapter mount prefix included. */
  base: string;
  /** The port of the real server (node-server mode). */
  port: number | null;
  /** Fetches an absolute URL (a link the service handed out included). */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /** A request whose Host header is exactly `host` (through the server: as sent, case and trailing dot kept). */
  fetchHost(host: string, path: string, init?: RequestInit): Promise<Response>;
  /** The base URL that names a deployment this way. */
  baseOf(a: Addressing): string;
  /** A Harness-shaped client whose paths go to the deployment `a` names. */
  at(a: Addressing): Harness;
  close(): Promise<void>;
}

export interface GatewaySpec {
  deployments: DeploymentSpec[];
  fallback?: string | null;
  pathPrefix?: string | false;
  /** The adapter's mount prefix ('/graph'): the server's, or passed to fetch in process. */
  mountPrefix?: string;
  /** The Node server's body limit (its 413 refusals go through the gateway's `refuse`). */
  maxBodyBytes?: number;
}

/** An http(s) fetch that sends the URL's host as the Host header while connecting to 127.0.0.1:port. */
async function fetchWithHost(url: string, init: RequestInit, port: number, hostHeader?: string): Promise<Response> {
  const req = new Request(url, { ...init, duplex: 'half' } as RequestInit);
  const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
  const u = new URL(url);
  const headers: Record<string, string> = Object.fromEntries(req.headers.entries());
  headers.host = hostHeader ?? u.host;
  if (body) headers['content-length'] = String(body.byteLength);
  return new Promise<Response>((resolve, reject) => {
    const out = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: u.pathname + u.search, headers, signal: init.signal ?? undefined },
      (res) => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (v === undefined) continue;
          for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
        }
        const status = res.statusCode ?? 0;
        const bodiless = req.method === 'HEAD' || status === 204 || status === 304;
        if (bodiless) res.resume();
        resolve(new Response(bodiless ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: h }));
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

export async function startGateway(mode: Mode, spec: GatewaySpec): Promise<GatewayHarness> {
  const started: Deployment[] = [];
  try {
    for (const d of spec.deployments) started.push(await startDeployment(d));
  } catch (err) {
    for (const d of started) await d.service.close();
    throw err;
  }
  const gateway = createDeploymentGateway({
    deployments: started.map((d, i) => ({ service: d.service, staging: spec.deployments[i]!.staging })),
    baseDomains: [BASE_DOMAIN],
    stagingDomains: [STAGING_DOMAIN],
    ...(spec.fallback !== undefined && { fallback: spec.fallback }),
    ...(spec.pathPrefix !== undefined && { pathPrefix: spec.pathPrefix }),
  });
  const mount = (spec.mountPrefix ?? '').replace(/\/+$/, '');
  let port: number | null = null;
  let stop = async () => {};
  if (mode === 'node-server') {
    const server = await serve(gateway, {
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      maxBodyBytes: spec.maxBodyBytes,
      ...(mount && { mountPrefix: mount }),
    });
    port = Number(new URL(server.url).port);
    stop = () => server.close();
  }
  const origin = (host: string) => (port === null ? `http://${host}` : `http://${host}:${port}`);
  const base = `${origin(port === null ? 'gw.test' : '127.0.0.1')}${mount}`;

  function fetchUrl(url: string, init: RequestInit = {}): Promise<Response> {
    if (port === null) {
      // As an adapter mounted under `mount` does: the prefix taken off the path, and given as an option.
      const u = new URL(url);
      if (mount && (u.pathname === mount || u.pathname.startsWith(`${mount}/`))) u.pathname = u.pathname.slice(mount.length) || '/';
      const request = new Request(u, { ...init, duplex: 'half' } as RequestInit);
      return gateway.fetch(request, mount ? { mountPrefix: mount } : undefined);
    }
    const u = new URL(url);
    if (u.hostname === '127.0.0.1') return fetch(url, { ...init, duplex: 'half' } as RequestInit);
    return fetchWithHost(url, init, port);
  }

  function baseOf(a: Addressing): string {
    if (a === 'none') return base;
    if ('host' in a) return `${origin(`${a.host}.${BASE_DOMAIN}`)}${mount}`;
    if ('staging' in a) return `${origin(`${a.staging}.${STAGING_DOMAIN}`)}${mount}`;
    return `${base}/deployment/${a.path}`;
  }

  const deployments = Object.fromEntries(started.map((d) => [d.id, d]));
  return {
    mode,
    gateway,
    deployments,
    base,
    port,
    fetch: fetchUrl,
    fetchHost(host, path, init = {}) {
      if (port === null) return fetchUrl(`http://${host}${mount}${path}`, init);
      return fetchWithHost(`http://127.0.0.1:${port}${mount}${path}`, init, port, `${host}:${port}`);
    },
    baseOf,
    at(a) {
      const b = baseOf(a);
      return {
        mode,
        service: gateway,
        base: b,
        dir: '',
        fetch: (pathOrUrl: string, init?: RequestInit) => fetchUrl(/^https?:\/\//.test(pathOrUrl) ? pathOrUrl : b + pathOrUrl, init),
        blobFiles: () => Promise.reject(new Error('no blob directory: memory storage')),
        close: async () => {},
      };
    },
    async close() {
      await stop();
      await gateway.close();
    },
  };
}

/** Polls `read` until `done` holds of its value; fails after `timeoutMs` with the last value seen. */
export async function pollUntil<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** JSON of a response (text when not JSON) with its status and headers. */
export async function reply(res: Response): Promise<{ status: number; headers: Headers; body: any }> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}
