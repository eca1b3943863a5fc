// The OpenAPI document of every surface (v2, cloud-compatible, music, video,
// operator), fetched from a running service in process and through a real
// Node server: valid OpenAPI 3.0, documenting exactly its surface's route
// table, every documented operation served (a request to it is not the
// surface's "no such route"), errors documented in the surface's own shape,
// and the facts clients rely on.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudSurface } from '../core/cloud/surface.ts';
import type { SurfaceDefinition } from '../core/http/surface.ts';
import { opsSurface } from '../core/ops/surface.ts';
import { musicSurface } from '../core/proxy/music/surface.ts';
import { videoSurface } from '../core/proxy/video/surface.ts';
import { v2Surface } from '../core/v2/surface.ts';
import { type Harness, MODES, startHarness, uploadForm } from './helpers/harness.ts';

interface SurfaceCase {
  name: string;
  document: string;
  definition: () => SurfaceDefinition;
  /** A path the surface owns that no route takes: its answer is the surface's "no such route". */
  unrouted: string;
  /** A request the surface refuses, and the component schema its error body is documented as. */
  error: { path: string; schema: string };
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const SURFACES: SurfaceCase[] = [
  {
    name: 'v2',
    document: '/api/v2/openapi.json',
    definition: () => v2Surface(),
    unrouted: '/api/v2/no-such-route',
    error: { path: `/api/v2/jobs/${UNKNOWN}`, schema: 'ErrorEnvelope' },
  },
  {
    name: 'cloud',
    document: '/api/openapi.json',
    definition: () => cloudSurface(),
    unrouted: '/no-such-route',
    error: { path: `/api/jobs/${UNKNOWN}`, schema: 'ErrorResponse' },
  },
  {
    name: 'music',
    document: '/proxy/musicgen/openapi.json',
    definition: () => musicSurface(),
    unrouted: '/proxy/musicgen/no-such-route',
    error: { path: '/proxy/musicgen/no-such-route', schema: 'MusicError' },
  },
  {
    name: 'video',
    document: '/proxy/videogen/openapi.json',
    definition: () => videoSurface(),
    unrouted: '/proxy/videogen/no-such-route',
    error: { path: '/proxy/videogen/tasks/no-such-task', schema: 'VideoError' },
  },
  {
    name: 'ops',
    document: '/openapi.json',
    definition: () => opsSurface(),
    unrouted: '/ops/no-such-route',
    error: { path: '/ops/no-such-route', schema: 'ErrorEnvelope' },
  },
];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** An itty pattern as OpenAPI writes the path: `:name` as `{name}`, each `*` as `{wildcard}`, `{wildcard2}`, ... */
function openApiPath(pattern: string): string {
  let n = 0;
  return pattern.replace(/:(\w+)[?+]?/g, '{$1}').replace(/\*/g, () => (++n === 1 ? '{wildcard}' : `{wildcard${n}}`));
}

/** `METHOD /path` of every operation of a document. */
function documented(doc: any): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((k) => METHODS.includes(k))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/** Every object in `value` has the required fields of its schema and no field the schema lacks (following $refs). */
function expectDocumentedFields(value: unknown, schema: any, schemas: Record<string, any>, at: string): void {
  if (schema.$ref) {
    expectDocumentedFields(value, schemas[schema.$ref.split('/').pop()], schemas, at);
    return;
  }
  if (Array.isArray(value) && schema.items) {
    for (const [i, item] of value.entries()) expectDocumentedFields(item, schema.items, schemas, `${at}[${i}]`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !schema.properties) return;
  expect(Object.keys(value), at).toEqual(expect.arrayContaining(schema.required ?? []));
  for (const [key, item] of Object.entries(value)) {
    expect(Object.keys(schema.properties), `${at}.${key}`).toContain(key);
    expectDocumentedFields(item, schema.properties[key], schemas, `${at}.${key}`);
  }
}

describe.each(MODES)('OpenAPI documents (%s)', (mode) => {
  let h: Harness;
  const docs = new Map<string, any>();
  /** Path parameter values that reach a handler: a real asset for the v2 asset routes. */
  const params: Record<string, string> = { prompt_id: UNKNOWN, class: 'SaveImage', task_id: 'no-such-task', file: 'no-such-file' };

  beforeAll(async () => {
    h = await startHarness(mode);
    for (const s of SURFACES) {
      const res = await h.fetch(s.document);
      expect(res.status, s.document).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      docs.set(s.name, await res.json());
    }
    const uploaded = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('openapi bytes') });
    expect(uploaded.status).toBe(201);
    const asset = (await uploaded.json()) as { id: string; hash: string };
    Object.assign(params, { id: asset.id, hash: asset.hash });
  });
  afterAll(() => h?.close());

  for (const s of SURFACES) {
    describe(s.name, () => {
      it('is valid OpenAPI 3.0, with unique operationIds and every path parameter declared', async () => {
        const doc = docs.get(s.name);
        expect(doc.openapi).toMatch(/^3\.0\./);
        await SwaggerParser.validate(structuredClone(doc));
        // What swagger-parser checks for Swagger 2.0 only.
        const ids: string[] = [];
        for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
          const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
          for (const method of Object.keys(item).filter((k) => METHODS.includes(k))) {
            const op = item[method];
            if (op.operationId) ids.push(op.operationId);
            const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
            expect([...declared].sort(), `${method} ${path}`).toEqual(names);
          }
        }
        expect(new Set(ids).size).toBe(ids.length);
        expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
      });

      it('documents exactly the routes of its surface', () => {
        const routes = s.definition().routes.map(([method, path]) => `${method} ${openApiPath(path)}`);
        expect(new Set(routes).size).toBe(routes.length);
        expect(documented(docs.get(s.name)).sort()).toEqual([...routes].sort());
      });

      it('serves every operation it documents', async () => {
        const doc = docs.get(s.name);
        const miss = await h.fetch(s.unrouted);
        expect(miss.status).toBe(404);
        const noRoute = await miss.text();
        const ops = documented(doc);
        // Deleting last: the asset the other requests name stays until then.
        ops.sort((a, b) => Number(a.startsWith('DELETE')) - Number(b.startsWith('DELETE')));
        const answer = async (method: string, path: string) => {
          const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? 'x'));
          const res = await h.fetch(url, { method });
          return { status: res.status, body: await res.text() };
        };
        for (const op of ops) {
          const [method, path] = op.split(' ');
          const { status, body } = await answer(method, path);
          expect(status, op).not.toBe(405);
          if (status !== 404) continue;
          // A HEAD answer has no body to tell a handler's 404 from the router's: its GET twin tells.
          if (method === 'HEAD') {
            expect(doc.paths[path].get, `${op} answered 404 and has no GET twin`).toBeDefined();
            expect((await answer('GET', path)).body, op).not.toBe(noRoute);
          } else expect(body, op).not.toBe(noRoute);
        }
      });

      it("documents errors in the surface's own shape", async () => {
        const doc = docs.get(s.name);
        const res = await h.fetch(s.error.path);
        expect(res.status).toBeGreaterThanOrEqual(400);
        const body = (await res.json()) as Record<string, unknown>;
        const schema = doc.components.schemas[s.error.schema];
        expect(Object.keys(body)).toEqual(expect.arrayContaining(schema.required));
        for (const key of Object.keys(body)) expect(Object.keys(schema.properties)).toContain(key);
      });
    });
  }

  it('v2: POST /api/v2/jobs requires a workflow, and no schema has an empty `required`', () => {
    const doc = docs.get('v2');
    const submission = doc.paths['/api/v2/jobs'].post.requestBody.content['application/json'].schema;
    expect(submission.required).toEqual(['workflow']);
    expect(submission.properties.extra_data).not.toHaveProperty('required');
    for (const d of docs.values()) expect(JSON.stringify(d)).not.toContain('"required":[]');
  });

  it('cloud: POST /api/prompt takes a prompt and documents its 400 in both error shapes; bare paths are their own operations', () => {
    const doc = docs.get('cloud');
    const post = doc.paths['/api/prompt'].post;
    expect(post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/PromptRequest');
    expect(doc.components.schemas.PromptRequest.required).toEqual(['prompt']);
    expect(post.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/PromptErrorResponse');
    expect(doc.components.schemas.PromptErrorResponse.required).toEqual(['code', 'message', 'error', 'node_errors']);
    expect(doc.paths['/prompt'].post.operationId).toBe(`${post.operationId}Unprefixed`);
    expect(doc.paths['/api/system_stats'].get.security).toEqual([]);
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    // The bare /openapi.json is the operator surface's.
    expect(doc.paths['/openapi.json']).toBeUndefined();
  });

  it('cloud: a refused prompt answers what the document says', async () => {
    const res = await h.fetch('/api/prompt', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(expect.arrayContaining(docs.get('cloud').components.schemas.PromptErrorResponse.required));
  });

  it('music and video: the request schemas carry the bounds the handlers enforce', () => {
    const music = docs.get('music').paths['/proxy/musicgen/t2m/generate'].post;
    expect(Object.keys(music.requestBody.content)).toEqual(['multipart/form-data']);
    expect(music.requestBody.content['multipart/form-data'].schema).toMatchObject({ required: ['prompt'], properties: { duration: { minimum: 1 } } });
    expect(Object.keys(music.responses['200'].content)).toEqual(['application/x-ndjson']);
    expect(music.responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/MusicError');
    const video = docs.get('video').components.schemas.MultiframeRequest;
    expect(video.required).toEqual(['image_settings', 'model']);
    expect(video.properties.image_settings).toMatchObject({ minItems: 2, maxItems: 9 });
    expect(video.properties.model.enum).toEqual(['gen-q2-pro', 'gen-q2-turbo']);
  });

  it('ops: the probes need no credentials and the operator token is its own scheme', () => {
    const doc = docs.get('ops');
    expect(doc.components.securitySchemes.operatorToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/healthz'].head).toBeDefined();
    for (const [path, item] of Object.entries(doc.paths as Record<string, any>)) {
      if (path !== '/metrics' && !path.startsWith('/ops/')) continue;
      for (const [method, op] of Object.entries(item as Record<string, any>))
        expect(op.security, `${method} ${path}`).toContainEqual({ operatorToken: [] });
    }
    // Changing the engine servers always takes the token (no open alternative).
    expect(doc.paths['/ops/servers'].post.security).toEqual([{ operatorToken: [] }]);
    expect(doc.paths['/ops/servers/{id}'].delete.security).toEqual([{ operatorToken: [] }]);
  });

  it('ops: the probes and the status answer the fields their schemas document', async () => {
    const doc = docs.get('ops');
    for (const path of ['/healthz', '/readyz', '/ops/status']) {
      const res = await h.fetch(path);
      const schema = doc.paths[path].get.responses[String(res.status)].content['application/json'].schema;
      expectDocumentedFields(await res.json(), schema, doc.components.schemas, path);
    }
  });
});

describe('OpenAPI servers', () => {
  it('name the mount prefix the adapter gave, so paths resolve under it', async () => {
    const h = await startHarness('in-process');
    try {
      for (const s of SURFACES) {
        const res = await h.service.fetch(new Request(`http://app.test${s.document}`), { mountPrefix: '/graph' });
        expect(((await res.json()) as any).servers, s.name).toEqual([expect.objectContaining({ url: '/graph' })]);
      }
    } finally {
      await h.close();
    }
  });
});
