// The OpenAPI document of the operator's surface, served at /openapi.json and
// built from its route table: probes for load balancers and Kubernetes, the
// Prometheus metrics, the fleet's status, the dashboard. Errors are the v2
// envelope; /metrics and /ops/* take the operator token (its own security
// scheme: account keys never open them) when the service has one.

import { DEPLOYMENT_OPERATIONS, DEPLOYMENT_SCHEMAS } from '../deployments/openapi.ts';
import { bearerScheme, type Json, jsonRef, openApiDocument, openApiSchema } from '../http/openapi.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics/text-format.ts';
import { ErrorEnvelopeSchema } from '../schemas.ts';
import { SERVER_OPERATIONS, SERVER_SCHEMAS } from './servers/openapi.ts';

const error = (description: string): Json => ({ description, content: jsonRef('ErrorEnvelope') });
const NO_AUTH: Json[] = [];
/** The token is asked for only when the operator set one; unset, these routes are open. */
const OPERATOR = [{ operatorToken: [] }, {}];
const operatorRefused = error('unauthorized (WWW-Authenticate: Bearer): the service has an operator token and the request did not carry it');
const headOf = (op: Json, operationId: string): Json => ({
  operationId,
  summary: `${op.summary} (headers only)`,
  security: op.security,
  responses: Object.fromEntries(Object.entries(op.responses as Record<string, Json>).map(([status, r]) => [status, { description: r.description }])),
});

const healthz: Json = {
  operationId: 'getHealthz',
  tags: ['probes'],
  summary: 'Liveness: the process answers (no I/O, so a slow database never restarts it)',
  security: NO_AUTH,
  responses: { '200': { description: 'Alive.', content: jsonRef('Health') } },
};
const readyz: Json = {
  operationId: 'getReadyz',
  tags: ['probes'],
  summary: 'Readiness: storage reachable, engine ready (for a worker pool, how many engine servers are healthy)',
  security: NO_AUTH,
  responses: {
    '200': { description: 'Ready to take work.', content: jsonRef('Readiness') },
    '503': {
      description: 'Not ready (also while the service shuts down): `checks` says what failed.',
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: jsonRef('Readiness'),
    },
  },
};
const dashboard: Json = {
  operationId: 'getDashboard',
  tags: ['dashboard'],
  summary: 'The web dashboard: jobs with live progress, outputs, uploads; queues and engine servers for operators',
  description: 'A static page; it calls the v2 API with the key the user enters (kept in the session).',
  security: NO_AUTH,
  responses: {
    '200': { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
    '304': { description: 'Not modified (If-None-Match).' },
  },
};
const dashboardFile: Json = {
  operationId: 'getDashboardFile',
  tags: ['dashboard'],
  summary: "One of the dashboard's style sheets or script modules",
  security: NO_AUTH,
  parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
  responses: {
    '200': { description: 'The file (text/css or text/javascript).' },
    '304': { description: 'Not modified (If-None-Match).' },
    '404': error('not_found: no such dashboard file'),
  },
};

const OPERATIONS: Record<string, Json> = {
  'GET /healthz': healthz,
  'HEAD /healthz': headOf(healthz, 'headHealthz'),
  'GET /readyz': readyz,
  'HEAD /readyz': headOf(readyz, 'headReadyz'),
  'GET /metrics': {
    operationId: 'getMetrics',
    tags: ['monitoring'],
    summary:
      'Prometheus metrics: jobs by status and tier, queue depth and oldest queued age per tier, durations, uploads, connections, engine servers',
    security: OPERATOR,
    responses: {
      '200': {
        description: 'The Prometheus text exposition format, version 0.0.4.',
        content: { [PROMETHEUS_CONTENT_TYPE]: { schema: { type: 'string' } } },
      },
      '401': operatorRefused,
    },
  },
  'GET /ops/status': {
    operationId: 'getOpsStatus',
    tags: ['monitoring'],
    summary: "The fleet as this instance sees it: readiness, the engine and its servers, each tier's queue",
    security: OPERATOR,
    responses: { '200': { description: 'The status.', content: jsonRef('OpsStatus') }, '401': operatorRefused },
  },
  'GET /': dashboard,
  'HEAD /': headOf(dashboard, 'headDashboard'),
  'GET /dashboard/:file': dashboardFile,
  'HEAD /dashboard/:file': { ...headOf(dashboardFile, 'headDashboardFile'), parameters: dashboardFile.parameters },
  'GET /openapi.json': {
    operationId: 'getOpenApi',
    summary: 'This document',
    security: NO_AUTH,
    responses: { '200': { description: 'OpenAPI 3.0 document.' } },
  },
  ...SERVER_OPERATIONS,
  ...DEPLOYMENT_OPERATIONS,
};

const check = (properties: Record<string, Json> = {}): Json => ({
  type: 'object',
  required: ['ok'],
  properties: { ok: { type: 'boolean' }, detail: { type: 'string', description: 'Why not (naming no host)' }, ...properties },
});
const checks: Json = {
  type: 'object',
  properties: {
    storage: check(),
    engine: check({
      state: { type: 'string', enum: ['ready', 'starting', 'unavailable'] },
      servers_healthy: { type: 'integer', description: 'For an engine on a pool of servers' },
      servers_total: { type: 'integer', description: 'For an engine on a pool of servers' },
    }),
    service: check(),
  },
  description:
    '`service` appears only while the service shuts down. A deployment an operator stopped stays ready: its clients must reach it to be told deployment_stopped (GET /ops/deployment says it is stopped)',
};

const SCHEMAS: Record<string, Json> = {
  ...SERVER_SCHEMAS,
  ...DEPLOYMENT_SCHEMAS,
  ErrorEnvelope: openApiSchema(ErrorEnvelopeSchema),
  Health: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } },
  Readiness: { type: 'object', required: ['status', 'checks'], properties: { status: { type: 'string', enum: ['ready', 'not_ready'] }, checks } },
  EngineServer: {
    type: 'object',
    required: ['url', 'healthy', 'busy', 'slots'],
    properties: {
      url: { type: 'string' },
      healthy: { type: 'boolean' },
      busy: { type: 'integer', description: 'Prompts of this service it is running or holds queued' },
      slots: { type: 'integer', description: 'Prompts it may hold at once for this service' },
    },
  },
  TierQueue: {
    type: 'object',
    required: ['tier', 'queued', 'running', 'oldest_queued_seconds'],
    properties: {
      tier: { type: 'string' },
      queued: { type: 'integer' },
      running: { type: 'integer' },
      oldest_queued_seconds: {
        type: 'number',
        nullable: true,
        description: 'Age of the oldest queued job (the autoscaling signal); null when none is queued',
      },
    },
  },
  OpsStatus: {
    type: 'object',
    required: ['ready', 'deployment', 'engine', 'queues', 'instance'],
    properties: {
      ready: { type: 'boolean' },
      deployment: { $ref: '#/components/schemas/Deployment' },
      engine: {
        type: 'object',
        required: ['name', 'readiness', 'servers'],
        properties: {
          name: { type: 'string' },
          readiness: {
            type: 'object',
            required: ['state'],
            properties: { state: { type: 'string', enum: ['ready', 'starting', 'unavailable'] }, detail: { type: 'string' } },
          },
          servers: { type: 'array', items: { $ref: '#/components/schemas/EngineServer' }, description: 'Empty for an in-process engine' },
        },
      },
      queues: { type: 'array', items: { $ref: '#/components/schemas/TierQueue' } },
      instance: {
        type: 'object',
        required: ['run_jobs', 'sse_streams', 'websockets'],
        properties: {
          run_jobs: { type: 'boolean', description: 'Whether this instance executes jobs (runJobs)' },
          sse_streams: { type: 'integer', description: 'Open SSE streams on this instance' },
          websockets: { type: 'integer', description: 'Open /ws connections on this instance' },
        },
      },
    },
  },
};

/** The document of the operator surface's route table (every route of it, or this throws). */
export function opsOpenApi(routes: ReadonlyArray<readonly [method: string, path: string, ...rest: unknown[]]>): Json {
  return openApiDocument(
    {
      title: 'graphrun operator endpoints',
      description:
        'Health and readiness probes (no auth, cheap), Prometheus metrics and the fleet status (the operator token when the service has one), the engine servers of the pool (changing them always needs the operator token), the web dashboard. Errors are `{error: {code, message, details?}}`.',
      tags: [
        { name: 'probes', description: 'For load balancers and Kubernetes liveness / readiness probes.' },
        { name: 'monitoring', description: 'Metrics and status for operators and autoscalers.' },
        { name: 'engine servers', description: 'The pool of engine servers, changed at run time (the operator token is required to change it).' },
        { name: 'dashboard', description: 'The web dashboard.' },
      ],
      securitySchemes: {
        operatorToken: bearerScheme(
          "`Authorization: Bearer <operatorToken>`: the operator's secret (service option operatorToken); account keys never open these routes.",
        ),
      },
      security: [],
      schemas: SCHEMAS,
      operation: (method, path) => OPERATIONS[`${method} ${path}`],
    },
    routes,
  );
}
