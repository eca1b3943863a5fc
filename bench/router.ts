// Router benchmark (npm run bench:router): what routing costs per request, on
// the service's real route tables (the four surfaces' mounts and routes, each
// handler answering at once so only the routing is timed), two ways:
// - ours: core/http/surface.ts, matching itty-router's compiled tables with one
//   loop at both levels (which surface, then which route);
// - itty: itty-router's own Router.fetch, a top router whose mounts hand the
//   request to each surface's router (`router.all('/api/v2/*', v2.fetch)`).
// Both in process, interleaved A B B A, on the hot path GET /api/v2/jobs/{id}
// and a cloud path (bare /prompt); the time to make the Request (the same
// for both) is measured apart and taken off. The baseline for "measurable"
// is a whole in-process GET /api/v2/jobs/{id} through service.fetch,
// measured in the same run.
import { Router } from 'itty-router';
import { cloudSurface } from '../core/cloud/surface.ts';
import type { ServiceContext } from '../core/context.ts';
import { urlPath } from '../core/http/links.ts';
import { createMountTable, createSurface, type SurfaceDefinition } from '../core/http/surface.ts';
import { musicSurface } from '../core/proxy/music/surface.ts';
import { videoSurface } from '../core/proxy/video/surface.ts';
import { v2Surface } from '../core/v2/surface.ts';
import { createService, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';

const ROUNDS = 4;
const PER_ROUND = 200_000;
const ORIGIN = 'http://bench.local';

const answer = async () => new Response(null, { status: 204 });
const definitions = (): SurfaceDefinition[] =>
  [v2Surface(), musicSurface(), videoSurface(), cloudSurface()].map(
    (d) => ({ ...d, routes: d.routes.map(([m, p]) => [m, p, answer] as const) }) as SurfaceDefinition,
  );

function ours(): (request: Request) => Promise<Response> {
  const ctx = { logger: silentLogger } as ServiceContext;
  const surfaces = definitions().map((d) => createSurface(d, ctx));
  const surfaceOf = createMountTable(surfaces, surfaces[0]);
  return (request) => {
    const path = urlPath(request.url);
    return surfaceOf(path).handle(request, path);
  };
}

function itty(): (request: Request) => Promise<Response> {
  const top = Router();
  const defs = definitions();
  for (const d of defs) {
    const sub = Router({ catch: () => new Response(null, { status: 500 }) });
    for (const [method, path, handler] of d.routes) sub[method.toLowerCase() as 'get'](path, handler);
    sub.all('*', () => new Response(null, { status: 404 }));
    for (const mount of d.mounts) top.all(mount, sub.fetch);
  }
  top.all('*', () => new Response(null, { status: 404 }));
  return (request) => top.fetch(request);
}

/** ns per request over `n` requests made fresh each time (a Request is per request in a server too). */
async function time(route: (request: Request) => Promise<Response>, urls: string[], n: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await route(new Request(urls[i % urls.length]));
  return Number(process.hrtime.bigint() - start) / n;
}

async function main(): Promise<void> {
  const id = crypto.randomUUID();
  const cases: Record<string, string[]> = {
    'GET /api/v2/jobs/{id}': [`${ORIGIN}/api/v2/jobs/${id}`],
    'GET /prompt (cloud, bare)': [`${ORIGIN}/prompt`],
  };
  const none = (_request: Request) => answer();
  const a = ours();
  const b = itty();
  for (const urls of Object.values(cases)) {
    await time(a, urls, 20_000);
    await time(b, urls, 20_000);
  }

  // The baseline: the whole request in process, a succeeded job read back.
  const service = await createService({ storage: createMemoryStorage(), logger: silentLogger, sweepIntervalMs: 0 });
  const workflow = { '1': { class_type: 'PrimitiveInt', inputs: { value: 1 } }, '2': { class_type: 'PreviewAny', inputs: { source: ['1', 0] } } };
  const submitted = await service.fetch(
    new Request(`${ORIGIN}/api/v2/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow }) }),
  );
  const job = (await submitted.json()) as { id: string };
  for (;;) {
    const state = (await (await service.fetch(new Request(`${ORIGIN}/api/v2/jobs/${job.id}`))).json()) as { status: string };
    if (state.status === 'succeeded' || state.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const whole = async (n: number) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await (await service.fetch(new Request(`${ORIGIN}/api/v2/jobs/${job.id}`))).arrayBuffer();
    return Number(process.hrtime.bigint() - start) / n;
  };
  await whole(5_000);
  const wholeNs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) wholeNs.push(await whole(20_000));
  await service.close();

  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const base = median(wholeNs);
  console.log(`whole GET /api/v2/jobs/{id} in process (service.fetch, memory storage): ${(base / 1000).toFixed(2)} µs per request`);
  for (const [name, urls] of Object.entries(cases)) {
    const oursNs: number[] = [];
    const ittyNs: number[] = [];
    const made: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      made.push(await time(none, urls, PER_ROUND / 2));
      // A B B A: a drift of the machine's speed weighs on both alike.
      oursNs.push(await time(a, urls, PER_ROUND / 2));
      ittyNs.push(await time(b, urls, PER_ROUND / 2));
      ittyNs.push(await time(b, urls, PER_ROUND / 2));
      oursNs.push(await time(a, urls, PER_ROUND / 2));
    }
    const [o, i] = [median(oursNs) - median(made), median(ittyNs) - median(made)];
    console.log(
      `${name.padEnd(28)} routing: ours ${(o / 1000).toFixed(2)} µs, itty's fetch ${(i / 1000).toFixed(2)} µs ` +
        `(itty costs ${((i - o) / 1000).toFixed(2)} µs more = ${(((i - o) / base) * 100).toFixed(1)} % of the whole request)`,
    );
  }
}

await main();
