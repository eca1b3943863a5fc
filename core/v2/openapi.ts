// The OpenAPI document the service serves at /api/v2/openapi.json, generated
// from the same valibot schemas the handlers validate with, so the document
// cannot drift from what the service accepts and returns.
import { type Json, jsonRef as json, openApiDocument, openApiSchema as schema } from '../http/openapi.ts';
import { JobErrorSchema, JobSchema, JobWorkflowSchema, OutputSchema, ProgressSchema } from '../jobs/job-schema.ts';
import { JOB_STATUSES } from '../jobs/state-machine.ts';
import { AssetSchema, ErrorEnvelopeSchema, FromHashBody, JobSubmission, UploadFields } from '../schemas.ts';

const error = (description: string) => ({ description, content: json('ErrorEnvelope') });
const asset = (description: string) => ({ description, content: json('Asset') });
const job = (description: string) => ({ description, content: json('Job') });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 255 },
  description: 'Single use for 24 h; a reused key is rejected with 422 idempotency_key_reuse.',
};
const common = { '401': error('unauthorized'), '500': error('upstream_error') };

/** Operation documents keyed by `METHOD path` as the route table writes them. */
export const OPERATIONS: Record<string, Json> = {
  'POST /api/v2/assets': {
    operationId: 'postAssets',
    summary: 'Upload an asset (streamed multipart)',
    parameters: [idempotencyKey],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: (() => {
            const fields = schema(UploadFields) as { properties: Json; required?: string[] };
            return {
              ...fields,
              properties: { file: { type: 'string', format: 'binary' }, ...fields.properties },
              required: ['file', ...(fields.required ?? [])],
            };
          })(),
        },
      },
    },
    responses: {
      '201': asset('New blob stored; asset minted.'),
      '200': asset('Bytes deduplicated to an existing blob; asset minted over it.'),
      '400': error('malformed_request'),
      '409': error('hash_mismatch (with Retry-After): expected_hash, whatever its form, is not the computed hash'),
      '413': error('payload_too_large'),
      '415': error('unsupported_media_type'),
      '422': error('invalid_request or idempotency_key_reuse'),
      ...common,
    },
  },
  'POST /api/v2/assets/from-hash': {
    operationId: 'assetFromHash',
    summary: 'Mint an asset over bytes the account already holds',
    parameters: [idempotencyKey],
    requestBody: { required: true, content: { 'application/json': { schema: schema(FromHashBody) } } },
    responses: {
      '201': asset('Asset minted over the existing blob.'),
      '200': asset('An identical reference already existed; returned as-is.'),
      '404': error('blob_not_found: no blob the caller may mint from, a malformed hash included'),
      '422': error('invalid_request (hash missing or not a string, a bad file_path, tags or expires_in) or idempotency_key_reuse'),
      ...common,
    },
  },
  'HEAD /api/v2/assets/by-hash/:hash': {
    operationId: 'headAssetByHash',
    summary: 'Whether the account can mint from this blob',
    parameters: [{ name: 'hash', in: 'path', required: true, schema: { type: 'string' } }],
    responses: { '200': { description: 'Mintable.' }, '404': { description: 'Not mintable (a malformed hash included).' }, ...common },
  },
  'GET /api/v2/assets/:id': {
    operationId: 'getAsset',
    summary: 'Asset metadata with a fresh signed url',
    parameters: [idParam],
    responses: { '200': asset('The asset.'), '404': error('not_found'), ...common },
  },
  'DELETE /api/v2/assets/:id': {
    operationId: 'deleteAsset',
    summary: 'Delete an asset record; the bytes go once nothing references them',
    parameters: [idParam],
    responses: { '204': { description: 'Deleted.' }, '404': error('not_found'), ...common },
  },
  'GET /api/v2/assets/:id/content': {
    operationId: 'getAssetContent',
    summary: 'Asset bytes (Range supported); also reachable through the signed url without auth',
    parameters: [idParam, { name: 'Range', in: 'header', required: false, schema: { type: 'string' } }],
    responses: {
      '200': { description: 'The content.' },
      '206': { description: 'Partial content.' },
      '304': { description: 'Not modified (If-None-Match).' },
      '403': error('forbidden: invalid or expired signed url'),
      '404': error('not_found'),
      '416': error('range_not_satisfiable'),
      ...common,
    },
  },
  'HEAD /api/v2/assets/:id/content': {
    operationId: 'headAssetContent',
    summary: 'Asset content headers',
    parameters: [idParam],
    responses: { '200': { description: 'Headers of the content.' }, '404': { description: 'Not found.' } },
  },
  'POST /api/v2/jobs': {
    operationId: 'postJobs',
    summary: 'Submit an API-format workflow; validated synchronously, durably queued',
    description:
      'Beyond the contract, the body also takes `priority` (an integer, higher starts first within the account) and `metadata` (a JSON object shown on the Job); both are echoed on the Job, with `outputs_reused`.',
    parameters: [idempotencyKey],
    requestBody: { required: true, content: { 'application/json': { schema: schema(JobSubmission) } } },
    responses: {
      '201': job('Job created and queued (Location: its URL).'),
      '400': error('malformed_request'),
      '402': error('insufficient_credits'),
      '413': error('payload_too_large'),
      '415': error('unsupported_media_type'),
      '422': error(
        'invalid_workflow (details.node_errors; or details.field for a body without a workflow object and for the reserved webhook_url and inputs), workflow_format_ui, missing_asset, idempotency_key_reuse, invalid_request (extra_data, priority, metadata: details.field names it), or deployment_stopped (an operator stopped the deployment; every route of a stopped deployment answers it)',
      ),
      '429': error('queue_full or deployment_not_ready (the deployment is not ready yet), both with Retry-After'),
      ...common,
    },
  },
  'GET /api/v2/jobs': {
    operationId: 'listJobs',
    summary: "The caller's jobs, newest first, a page at a time (an addition to the contract)",
    description:
      'Each entry is the Job GET /api/v2/jobs/{id} answers. Pages are cut by submission order, so jobs submitted between two requests neither shift nor repeat later pages; jobs past their retention are left out (a page may then hold fewer than `limit` while `next_cursor` still points further).',
    parameters: [
      {
        name: 'status',
        in: 'query',
        required: false,
        style: 'form',
        explode: true,
        schema: { type: 'array', items: { type: 'string', enum: [...JOB_STATUSES] } },
        description: 'Only jobs in these statuses: one or several, comma-separated or repeated. Default: all (expired jobs are never listed).',
      },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: 'The `next_cursor` of the previous page, as given (opaque).',
      },
    ],
    responses: {
      '200': { description: 'One page of jobs.', content: json('JobList') },
      '422': error('invalid_request: an unknown status, a limit out of 1..100, or a cursor this service did not hand out'),
      ...common,
    },
  },
  'GET /api/v2/jobs/:id': {
    operationId: 'getJob',
    summary: 'Job status (the polling workhorse)',
    parameters: [idParam],
    responses: { '200': job('The job.'), '404': error("not_found (also another account's or an expired job)"), ...common },
  },
  'GET /api/v2/jobs/:id/workflow': {
    operationId: 'getJobWorkflow',
    summary: 'The workflow behind a job (format api), never its extra_data',
    parameters: [idParam],
    responses: {
      '200': { description: 'The workflow.', content: json('JobWorkflowResponse') },
      '404': error('not_found'),
      ...common,
    },
  },
  'POST /api/v2/jobs/:id/cancel': {
    operationId: 'cancelJob',
    summary: 'Request cancellation (idempotent): canceling, canceled, or the terminal state',
    parameters: [idParam],
    responses: { '200': job('Current job state.'), '404': error('not_found'), ...common },
  },
  'GET /api/v2/jobs/:id/events': {
    operationId: 'getJobEvents',
    summary: 'Live Server-Sent Events: status (the Job), progress, preview, output; ends after the terminal status',
    parameters: [idParam],
    responses: {
      '200': { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      '404': error('not_found'),
      '429': error('too_many_streams (with Retry-After)'),
      ...common,
    },
  },
  'GET /api/v2/openapi.json': {
    operationId: 'getOpenApi',
    summary: 'This document',
    security: [],
    responses: { '200': { description: 'OpenAPI 3.0 document.' } },
  },
};

/** The document of the v2 route table (every route of it, or this throws). */
export function v2OpenApi(routes: ReadonlyArray<readonly [method: string, path: string, ...rest: unknown[]]>): Json {
  return openApiDocument(
    {
      title: 'graphrun v2 API',
      version: '2.0.0',
      description:
        'The v2 contract, plus additions that change nothing it defines: GET /api/v2/jobs (listing), `priority` and `metadata` on POST /api/v2/jobs, and `priority`, `metadata` and `outputs_reused` on every Job.',
      security: [{ bearerAuth: [] }, {}],
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      operation: (method, path) => OPERATIONS[`${method} ${path}`],
      schemas: {
        Asset: schema(AssetSchema),
        ErrorEnvelope: schema(ErrorEnvelopeSchema),
        Job: schema(JobSchema),
        JobError: schema(JobErrorSchema),
        JobList: {
          type: 'object',
          description: 'A page of GET /api/v2/jobs (an addition to the contract).',
          required: ['jobs', 'next_cursor'],
          properties: {
            jobs: { type: 'array', items: { $ref: '#/components/schemas/Job' } },
            next_cursor: { type: 'string', nullable: true, description: 'Pass as `cursor` for the next (older) page; null on the last page.' },
          },
        },
        JobWorkflowResponse: schema(JobWorkflowSchema),
        Output: schema(OutputSchema),
        Progress: schema(ProgressSchema),
      },
    },
    routes,
  );
}
