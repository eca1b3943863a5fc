// The OpenAPI operations and schemas of /ops/deployment, merged into the
// operator surface's document (core/ops/openapi.ts).
import { type Json, jsonRef } from '../http/openapi.ts';

const error = (description: string): Json => ({ description, content: jsonRef('ErrorEnvelope') });
const READ = [{ operatorToken: [] }, {}];
const CHANGE = [{ operatorToken: [] }];
const tags = ['deployment'];
const view = (description: string): Json => ({ description, content: jsonRef('Deployment') });
const unauthorized = error('unauthorized (WWW-Authenticate: Bearer): the request did not carry the operator token');
const forbidden = error('forbidden: the service has no operator token, so its condition cannot be changed (start it with --operator-token)');

export const DEPLOYMENT_OPERATIONS: Record<string, Json> = {
  'GET /ops/deployment': {
    operationId: 'getDeployment',
    tags,
    summary: 'This deployment and its condition: ready, not_ready (its engine is starting; submissions get 429 deployment_not_ready) or stopped',
    security: READ,
    responses: { '200': view('The deployment.'), '401': unauthorized },
  },
  'POST /ops/deployment/stop': {
    operationId: 'stopDeployment',
    tags,
    summary:
      'Stops the deployment: its API surfaces answer 422 deployment_stopped and it starts no job (running jobs finish, queued ones wait). Stored: it stays stopped across restarts, on every instance',
    security: CHANGE,
    responses: { '200': view('Stopped (a second stop keeps the first one).'), '401': unauthorized, '403': forbidden },
  },
  'POST /ops/deployment/start': {
    operationId: 'startDeployment',
    tags,
    summary: 'Starts a stopped deployment again: it is ready or not_ready as its engine is, and its queued jobs run',
    security: CHANGE,
    responses: { '200': view('Started.'), '401': unauthorized, '403': forbidden },
  },
};

export const DEPLOYMENT_SCHEMAS: Record<string, Json> = {
  Deployment: {
    type: 'object',
    required: ['id', 'state', 'detail', 'engine'],
    properties: {
      id: { type: 'string', description: "The deployment's id, one DNS label ('default' for a service given none)" },
      state: { type: 'string', enum: ['ready', 'not_ready', 'stopped'] },
      detail: {
        type: 'string',
        nullable: true,
        description: 'Why it is not ready, since when it is stopped, or (ready) that no engine server is up so jobs wait in the queue',
      },
      engine: {
        type: 'object',
        required: ['name', 'state'],
        properties: { name: { type: 'string' }, state: { type: 'string', enum: ['ready', 'starting', 'unavailable'] } },
      },
    },
  },
};
