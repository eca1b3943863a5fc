// OpenAPI operations of the cloud surface's job routes (jobs-routes.ts),
// keyed as that table declares them, without the `/api` prefix.
import type { Json, Operations } from '../http/openapi.ts';
import { BAD_REQUEST, body, COMMON, error, ok, promptError } from './openapi-parts.ts';
import { CLOUD_STATUSES } from './status.ts';

const query = (name: string, description: string, schema: Json): Json => ({ name, in: 'query', required: false, schema, description });
const promptId = { name: 'prompt_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'The job id' };
const empty = (description: string): Json => ({ description });
const list = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } },
});

export const JOBS_OPERATIONS: Operations = {
  'POST /prompt': {
    operationId: 'executePrompt',
    tags: ['workflow'],
    summary: 'Submit a workflow (API format); validated synchronously, durably queued',
    description:
      "The same job as POST /api/v2/jobs; `prompt_id` is its id. Every refusal carries both the cloud `{code, message}` and the reference engine's `{error, node_errors}`.",
    requestBody: body('PromptRequest'),
    responses: {
      '200': ok('Accepted.', 'PromptResponse'),
      '400': promptError('invalid_workflow (node_errors per node), workflow_format_ui, missing_asset, invalid_request (a bad field)'),
      '401': promptError('unauthorized'),
      '402': promptError('insufficient_credits'),
      '413': promptError('payload_too_large: the workflow is over the size limit'),
      '429': promptError('queue_full, subscription_inactive or deployment_not_ready (with Retry-After)'),
      '500': promptError('upstream_error'),
    },
  },
  'GET /prompt': {
    operationId: 'getPromptInfo',
    tags: ['workflow'],
    summary: "How many of the caller's jobs are queued or running",
    responses: { '200': ok('Queue counts.', 'PromptInfo'), ...COMMON },
  },
  'GET /job/:prompt_id/status': {
    operationId: 'getJobStatus',
    tags: ['job'],
    summary: "A job's status (poll until completed, failed or cancelled)",
    parameters: [promptId],
    responses: { '200': ok('The status.', 'JobStatusResponse'), '404': error("not_found (also another account's or an expired job)"), ...COMMON },
  },
  'GET /queue': {
    operationId: 'getQueueInfo',
    tags: ['job'],
    summary: "The caller's running and pending jobs",
    responses: { '200': ok('The queue.', 'QueueInfo'), ...COMMON },
  },
  'POST /queue': {
    operationId: 'manageQueue',
    tags: ['job'],
    summary: 'Cancel jobs: those named in `delete` (pending or running), every pending one with `clear`',
    requestBody: body('ManageRequest'),
    responses: { '200': ok('What was canceled.', 'QueueManageResponse'), '400': BAD_REQUEST, ...COMMON },
  },
  'POST /interrupt': {
    operationId: 'interruptJob',
    tags: ['job'],
    summary: "Cancel the caller's running jobs (or only `prompt_id`); pending ones stay",
    requestBody: body('InterruptRequest', false),
    responses: {
      '200': { description: 'Done (also when nothing was running).', content: { 'application/json': { schema: { type: 'object' } } } },
      '400': BAD_REQUEST,
      ...COMMON,
    },
  },
  'GET /history': {
    operationId: 'getHistory',
    tags: ['job'],
    summary: "The caller's finished jobs, newest first, in the reference engine's format",
    parameters: [
      query('max_items', 'Default 100; more than 1000 gets 1000', { type: 'integer', minimum: 1, default: 100 }),
      query('offset', 'Default 0', { type: 'integer', minimum: 0, default: 0 }),
    ],
    responses: { '200': ok('The history.', 'History'), '400': BAD_REQUEST, ...COMMON },
  },
  'POST /history': {
    operationId: 'manageHistory',
    tags: ['job'],
    summary: 'Take finished jobs out of the history (`delete`) or all of them (`clear`); the jobs themselves stay',
    requestBody: body('ManageRequest'),
    responses: { '200': empty('Done (empty body).'), '400': BAD_REQUEST, ...COMMON },
  },
  'GET /history/:prompt_id': {
    operationId: 'getHistoryForPrompt',
    tags: ['job'],
    summary: "One finished job's history entry",
    parameters: [promptId],
    responses: { '200': ok('`{<prompt_id>: entry}`, or `{}` for a job not finished, unknown or taken out of the history.', 'History'), ...COMMON },
  },
  'GET /jobs': {
    operationId: 'listJobs',
    tags: ['job'],
    summary: "The caller's jobs, a page at a time",
    parameters: [
      query('status', `Comma-separated: ${CLOUD_STATUSES.join(', ')}. Default: all.`, { type: 'string' }),
      query('workflow_id', 'Jobs here carry no workflow id: any value matches none.', { type: 'string' }),
      query('output_type', 'Only jobs with an output of this media type', { type: 'string', enum: ['image', 'video', 'audio'] }),
      query('sort_by', 'Default create_time', { type: 'string', enum: ['create_time', 'execution_time'], default: 'create_time' }),
      query('sort_order', 'Default desc', { type: 'string', enum: ['asc', 'desc'], default: 'desc' }),
      query('offset', 'Default 0', { type: 'integer', minimum: 0, default: 0 }),
      query('limit', 'Default 100', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }),
    ],
    responses: { '200': ok('One page.', 'JobsListResponse'), '400': BAD_REQUEST, ...COMMON },
  },
  'GET /jobs/:id': {
    operationId: 'getJobDetail',
    tags: ['job'],
    summary: 'One job with its workflow and, once finished, its outputs',
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
    responses: { '200': ok('The job.', 'JobDetailResponse'), '404': error('not_found'), ...COMMON },
  },
  'GET /system_stats': {
    operationId: 'getSystemStats',
    tags: ['system'],
    summary: "The reference engine's system report, from what this runtime can tell",
    security: [],
    responses: { '200': ok('System statistics.', 'SystemStatsResponse') },
  },
  'GET /features': {
    operationId: 'getFeatures',
    tags: ['system'],
    summary: 'Server feature flags',
    security: [],
    responses: { '200': ok('The flags.', 'Features') },
  },
  'POST /free': {
    operationId: 'freeMemory',
    tags: ['system'],
    summary: "Accepted for the reference engine's clients; nothing to unload here",
    requestBody: body('FreeRequest', false),
    responses: { '200': empty('Done (empty body).'), '400': BAD_REQUEST, ...COMMON },
  },
  'GET /extensions': {
    operationId: 'getExtensions',
    tags: ['system'],
    summary: "The frontend's extension scripts: none",
    security: [],
    responses: { '200': list('Always empty.') },
  },
  'GET /embeddings': {
    operationId: 'getEmbeddings',
    tags: ['system'],
    summary: 'Embedding model names: none',
    security: [],
    responses: { '200': list('Always empty.') },
  },
};
