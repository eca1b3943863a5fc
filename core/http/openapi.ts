// What the OpenAPI documents of every surface have in common: JSON Schemas
// converted from the valibot schemas the handlers validate with, paths built
// from the surface's own route table (a route without an operation throws,
// so an undocumented route cannot ship quietly), and the handler serving it
// with `servers` naming where this service is mounted.
import { toJsonSchema } from '@valibot/to-json-schema';
import type { GenericSchema } from 'valibot';
import { isRecord } from '../../lib/is-record.ts';
import { SERVICE_VERSION } from '../cloud/system.ts';
import type { ServiceContext } from '../context.ts';
import { requestOptions } from './request-options.ts';
import type { Handler } from './surface.ts';

export type Json = Record<string, unknown>;

/** Operation objects keyed `METHOD /path`, the path as the route table writes it. */
export type Operations = Record<string, Json>;

/**
 * OpenAPI 3.0's Schema Object is stricter than the JSON Schema the converter
 * writes: `required` needs at least one name (an object of optional fields
 * gets `required: []`), and `$schema` is no keyword of it.
 */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (!isRecord(value)) return value;
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$schema' || (key === 'required' && Array.isArray(item) && item.length === 0)) continue;
    out[key] = tidy(item);
  }
  return out;
}

/** A valibot schema as an OpenAPI 3.0 schema. Checks and transforms have no JSON Schema form; their rules go in descriptions. */
export const openApiSchema = (schema: GenericSchema): Json => tidy(toJsonSchema(schema, { target: 'openapi-3.0', errorMode: 'ignore' })) as Json;

/** A converted object schema with descriptions for some of its properties (what the valibot schema does not say). */
export function describeProperties(schema: Json, descriptions: Record<string, string>): Json {
  const properties = { ...(schema.properties as Record<string, Json>) };
  for (const [name, description] of Object.entries(descriptions)) {
    if (!properties[name]) throw new Error(`no property ${name} to describe`);
    properties[name] = { ...properties[name], description };
  }
  return { ...schema, properties };
}

/** `Authorization: Bearer <token>`, the scheme of every surface. */
export const bearerScheme = (description: string): Json => ({ type: 'http', scheme: 'bearer', description });
/** `X-API-Key: <key>`, which the cloud contract names and the /proxy surfaces also honour. */
export const apiKeyScheme = (description: string): Json => ({ type: 'apiKey', in: 'header', name: 'X-API-Key', description });

/** The generation routes' auth: an account key as a bearer token, or as X-API-Key; open deployments take neither. */
export const PROXY_AUTH = {
  securitySchemes: {
    BearerAuth: bearerScheme('An account key, as on the v2 API.'),
    ApiKeyAuth: apiKeyScheme('The same key; honoured when no Authorization header is sent.'),
  },
  security: [{ BearerAuth: [] }, { ApiKeyAuth: [] }, {}] as Record<string, string[]>[],
};

/** A response or request body of JSON matching a component schema. */
export const jsonRef = (name: string): Json => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });

/** A path parameter (all of them are strings to the router). */
export const pathParam = (name: string, description?: string, schema: Json = { type: 'string' }): Json => ({
  name,
  in: 'path',
  required: true,
  schema,
  ...(description === undefined ? {} : { description }),
});

/** An itty pattern as an OpenAPI path: `:name` (`:name?`, `:name+`) as `{name}`, `*` as `{wildcard}` (then `{wildcard2}`, ...). */
export function openApiPath(pattern: string): string {
  let wildcards = 0;
  return pattern.replace(/:(\w+)[?+]?|\*/g, (_token, name: string | undefined) => {
    if (name !== undefined) return `{${name}}`;
    wildcards++;
    return `{wildcard${wildcards === 1 ? '' : wildcards}}`;
  });
}

/** Path parameters the operation does not declare itself, as plain required strings (OpenAPI needs every one declared). */
function withPathParams(operation: Json, path: string): Json {
  const declared = (operation.parameters ?? []) as Json[];
  const missing = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((name) => !declared.some((p) => p.in === 'path' && p.name === name));
  return missing.length === 0 ? operation : { ...operation, parameters: [...declared, ...missing.map((name) => pathParam(name))] };
}

export interface DocumentSpec {
  title: string;
  description: string;
  /** Of the API this document describes; the service's version unless given. */
  version?: string;
  tags?: Json[];
  securitySchemes: Record<string, Json>;
  /** What applies to operations that do not say (`{}` in the list: also without credentials). */
  security: Array<Record<string, string[]>>;
  schemas: Record<string, Json>;
  /** The operation of a route, or undefined when it has none (the build then fails). */
  operation(method: string, path: string): Json | undefined;
}

/** The document of a surface: one operation per route of its table, in the table's order. */
export function openApiDocument(spec: DocumentSpec, routes: ReadonlyArray<readonly [method: string, path: string, ...rest: unknown[]]>): Json {
  const paths: Record<string, Json> = {};
  const ids = new Set<string>();
  for (const [method, pattern] of routes) {
    const op = spec.operation(method, pattern);
    if (!op) throw new Error(`route ${method} ${pattern} has no OpenAPI operation`);
    const path = openApiPath(pattern);
    const item = (paths[path] ??= {});
    const key = method.toLowerCase();
    if (item[key]) throw new Error(`route ${method} ${pattern} is in the table twice`);
    const id = op.operationId;
    if (typeof id === 'string') {
      if (ids.has(id)) throw new Error(`operationId ${id} is used twice (route ${method} ${pattern})`);
      ids.add(id);
    }
    item[key] = withPathParams(op, path);
  }
  return {
    openapi: '3.0.3',
    info: { title: spec.title, version: spec.version ?? SERVICE_VERSION, description: spec.description },
    servers: [{ url: '/' }],
    ...(spec.tags ? { tags: spec.tags } : {}),
    security: spec.security,
    paths,
    components: { securitySchemes: spec.securitySchemes, schemas: spec.schemas },
  };
}

/** Where the paths start: the public base URL when the operator set one, else the mount prefix the adapter gave. */
function serverUrl(ctx: ServiceContext, request: Request): string {
  return ctx.config.publicBase?.base || requestOptions(request)?.mountPrefix || '/';
}

/** The route handler serving a document: built on first request (so a service with an undocumented route still starts), cached. */
export function serveOpenApi(build: () => Json): Handler {
  let document: Json | undefined;
  return async (request, ctx) => {
    document ??= build();
    return Response.json({ ...document, servers: [{ url: serverUrl(ctx, request), description: 'This service' }] });
  };
}
