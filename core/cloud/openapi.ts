// The OpenAPI document of the cloud-compatible surface, served at
// /api/openapi.json and built from its route table: each route under `/api`
// as the cloud contract names it, and again bare (`/prompt`, `/view`, ...) as
// the reference engine serves it, tagged `unprefixed`. Errors are the
// contract's `{code, message}`; a path that is no route is answered as the
// reference answers one, a text `404: Not Found`.
import { apiKeyScheme, bearerScheme, type Json, openApiDocument } from '../http/openapi.ts';
import { FILES_OPERATIONS } from './openapi-files.ts';
import { JOBS_OPERATIONS } from './openapi-jobs.ts';
import { CLOUD_SCHEMAS } from './openapi-parts.ts';

const OPERATIONS: Record<string, Json> = {
  ...FILES_OPERATIONS,
  ...JOBS_OPERATIONS,
  'GET /openapi.json': {
    operationId: 'getOpenApi',
    tags: ['system'],
    summary: "This document (only under /api: the bare /openapi.json is the operator surface's)",
    security: [],
    responses: { '200': { description: 'OpenAPI 3.0 document.' } },
  },
};

/** The bare twin of an `/api` operation: the same, under an operationId of its own. */
function unprefixed(op: Json, path: string): Json {
  return {
    ...op,
    operationId: `${op.operationId}Unprefixed`,
    tags: ['unprefixed'],
    description: `The same as \`/api${path}\`, served bare as the reference engine serves it.`,
  };
}

function operation(method: string, path: string): Json | undefined {
  if (path.startsWith('/api/')) return OPERATIONS[`${method} ${path.slice('/api'.length)}`];
  const op = OPERATIONS[`${method} ${path}`];
  return op && unprefixed(op, path);
}

const TAGS = [
  { name: 'workflow', description: 'Submit workflows.' },
  { name: 'job', description: 'Watch, list and cancel jobs; their history.' },
  { name: 'file', description: 'Upload inputs and download outputs: a flat, content-addressed namespace.' },
  { name: 'node', description: 'The node classes the engine has.' },
  { name: 'system', description: 'Server information; routes of the reference engine with nothing behind them here.' },
  { name: 'unprefixed', description: 'Every route again without `/api`, as the reference engine serves it.' },
];

/** The document of the cloud surface's route table (every route of it, or this throws). */
export function cloudOpenApi(routes: ReadonlyArray<readonly [method: string, path: string, ...rest: unknown[]]>): Json {
  return openApiDocument(
    {
      title: 'graphrun cloud-compatible API',
      description:
        "The cloud-compatible contract (experimental there too) over the same jobs and files as the v2 API, answered as the reference engine's server answers. Live progress is the WebSocket at `/ws` (or `/api/ws`; `token` query parameter, X-API-Key or Authorization: Bearer), not described here. A self-hosted service without configured keys takes requests without credentials.",
      tags: TAGS,
      securitySchemes: {
        ApiKeyAuth: apiKeyScheme("The account's API key (the cloud contract's scheme)."),
        bearerAuth: bearerScheme('The same key, as v2 clients send it.'),
      },
      security: [{ ApiKeyAuth: [] }, { bearerAuth: [] }, {}],
      schemas: CLOUD_SCHEMAS,
      operation,
    },
    routes,
  );
}
