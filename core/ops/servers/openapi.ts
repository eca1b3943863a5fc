// The OpenAPI operations and schemas of /ops/servers, merged into the
// operator surface's document (core/ops/openapi.ts).
import { type Json, jsonRef } from '../../http/openapi.ts';

const error = (description: string): Json => ({ description, content: jsonRef('ErrorEnvelope') });
/** Reading takes the token only when the service has one, as /ops/status does. */
const READ = [{ operatorToken: [] }, {}];
/** Changing always takes it: without one configured, these answer 403. */
const CHANGE = [{ operatorToken: [] }];
const refused = {
  '401': error('unauthorized (WWW-Authenticate: Bearer): the request did not carry the operator token'),
  '403': error('forbidden: the service has no operator token, so the set of engine servers cannot be changed (start it with --operator-token)'),
  '409': error('no_server_pool: the engine runs jobs in process, it has no pool of engine servers'),
};
const server = (description: string): Json => ({ description, content: jsonRef('RegisteredEngineServer') });
const tags = ['engine servers'];

export const SERVER_OPERATIONS: Record<string, Json> = {
  'GET /ops/servers': {
    operationId: 'listEngineServers',
    tags,
    summary: "The engine servers registered at run time, each with this instance's live view of it, and the configured ones",
    security: READ,
    responses: { '200': { description: 'The servers.', content: jsonRef('EngineServerList') }, '401': refused['401'] },
  },
  'POST /ops/servers': {
    operationId: 'addEngineServer',
    tags,
    summary: 'Registers an engine server: it joins the pool of every runner on the storage (stored, so it stays after a restart)',
    description: 'Adding a URL that is registered already returns its row (200), made active again if it was draining.',
    security: CHANGE,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['url'],
            properties: { url: { type: 'string', example: 'http://gpu-3:8188', description: 'http(s) base URL; no credentials, query or fragment' } },
          },
        },
      },
    },
    responses: {
      '201': server('Registered and joining.'),
      '200': server('Already registered (made active again if it was draining).'),
      '400': error('malformed_request: not an http(s) base URL (details.reason), or not JSON'),
      ...refused,
    },
  },
  'POST /ops/servers/:id/drain': {
    operationId: 'drainEngineServer',
    tags,
    summary: 'The server takes no new job; the prompts running there finish. POST /ops/servers with its URL makes it active again',
    security: CHANGE,
    responses: { '202': server('Draining.'), '404': error('not_found: no server has this id'), ...refused },
  },
  'DELETE /ops/servers/:id': {
    operationId: 'removeEngineServer',
    tags,
    summary: 'The server leaves the pool now; a job running there runs again on another server (drain first to let it finish)',
    security: CHANGE,
    responses: { '204': { description: 'Removed.' }, '404': error('not_found: no server has this id'), ...refused },
  },
};

const live: Json = {
  type: 'object',
  required: ['healthy', 'busy', 'slots', 'state', 'warming', 'models'],
  properties: {
    healthy: { type: 'boolean' },
    busy: { type: 'integer', description: 'Prompts of this instance it is running or holds queued' },
    slots: { type: 'integer' },
    state: { type: 'string', enum: ['active', 'draining'] },
    warming: { type: 'boolean', description: 'Running its warm-up workflow: takes no job yet' },
    models: { type: 'array', items: { type: 'string' }, description: 'Model files it is taken to hold in memory' },
  },
};

export const SERVER_SCHEMAS: Record<string, Json> = {
  RegisteredEngineServer: {
    type: 'object',
    required: ['id', 'deployment', 'url', 'state', 'created_at', 'updated_at', 'live'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      deployment: { type: 'string', description: "The id of the deployment whose pool it is in ('default' for a service given no deploymentId)" },
      url: { type: 'string' },
      state: { type: 'string', enum: ['active', 'draining'] },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      live: { ...live, nullable: true, description: "This instance's engine's view; null when its pool does not have the server" },
    },
  },
  EngineServerList: {
    type: 'object',
    required: ['servers', 'configured'],
    properties: {
      servers: { type: 'array', items: { $ref: '#/components/schemas/RegisteredEngineServer' } },
      configured: {
        type: 'array',
        description: "Servers of this instance's engine options (--worker) that are not registered",
        items: { ...live, required: ['url', ...(live.required as string[])], properties: { url: { type: 'string' }, ...(live.properties as Json) } },
      },
    },
  },
};
