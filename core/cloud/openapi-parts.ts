// What the cloud surface's OpenAPI operations share: its error bodies (the
// cloud contract's ErrorResponse `{code, message, details?}`, POST /prompt's
// refusal in both the cloud's and the reference engine's terms) and the
// component schemas, converted from the valibot schemas of the handlers where
// they have one, else written after the cloud contract
// (spec/cloud.openapi.yaml) and what the handlers answer.
import { describeProperties, type Json, jsonRef, openApiSchema } from '../http/openapi.ts';
import { FreeBody } from './empty-routes.ts';
import { FILE_TYPES } from './file-params.ts';
import { ManageBody } from './manage-body.ts';
import { PromptFields } from './prompt.ts';
import { InterruptBody } from './queue.ts';
import { CLOUD_STATUSES } from './status.ts';

export const error = (description: string): Json => ({ description, content: jsonRef('ErrorResponse') });
export const promptError = (description: string): Json => ({ description, content: jsonRef('PromptErrorResponse') });
export const ok = (description: string, schema: string): Json => ({ description, content: jsonRef(schema) });
/** A JSON request body of a component schema; these routes also read a body sent without a JSON content type. */
export const body = (schema: string, required = true): Json => ({ required, content: jsonRef(schema) });

export const COMMON: Record<string, Json> = {
  '401': error('unauthorized: no key, or one this service does not know (X-API-Key, or Authorization: Bearer)'),
  '500': error('upstream_error: a generic message; the cause is logged only'),
};
export const BAD_REQUEST = error('invalid_request or malformed_request: `message` names the field, `details` says more');

const obj = (properties: Record<string, Json>, required?: string[], extra: Json = {}): Json => ({
  type: 'object',
  ...(required ? { required } : {}),
  properties,
  ...extra,
});
const str = (description?: string, extra: Json = {}): Json => ({ type: 'string', ...(description ? { description } : {}), ...extra });
const int = (description?: string): Json => ({ type: 'integer', format: 'int64', ...(description ? { description } : {}) });
const anyObject = (description: string): Json => ({ type: 'object', description, additionalProperties: true });
const status = (description: string): Json => str(description, { enum: [...CLOUD_STATUSES] });

const promptRequest = () => {
  const fields = describeProperties(openApiSchema(PromptFields), {
    extra_data:
      'Only `api_key_platform_org` (or its alias `api_key_comfy_org`) is used: the key handed to partner nodes, never stored. Other keys are ignored.',
    number: 'Accepted and ignored: the fair scheduler orders jobs.',
    front: 'Accepted and ignored: the fair scheduler orders jobs.',
    client_id: 'Accepted and ignored: every /ws connection of the account gets the job messages.',
    prompt_id: 'The job id to use (a lowercase UUID not in use yet); a new one when absent.',
    partial_execution_targets: 'Not supported: a non-empty list is a 400 (a job runs all of its output nodes).',
  });
  const prompt = anyObject('The workflow in API format: node objects `{class_type, inputs}` keyed by node id.');
  return { ...fields, required: ['prompt'], properties: { prompt, ...(fields.properties as Json) } };
};

const fileRef = obj({ filename: str(), subfolder: str(undefined, { default: '' }), type: str(undefined, { enum: [...FILE_TYPES] }) }, ['filename']);

export const CLOUD_SCHEMAS: Record<string, Json> = {
  ErrorResponse: obj(
    { code: str('Machine-readable, as the v2 error codes'), message: str(), details: anyObject('More about the error, when there is more') },
    ['code', 'message'],
  ),
  PromptErrorResponse: obj(
    {
      code: str(),
      message: str(),
      error: obj(
        {
          type: str('The reason, e.g. prompt_outputs_failed_validation, no_prompt, api_key_required'),
          message: str(),
          details: str(),
          extra_info: anyObject(''),
        },
        ['type', 'message', 'details', 'extra_info'],
        { description: "The reference engine's refusal: a submission result with `error` was not accepted." },
      ),
      node_errors: {
        type: 'object',
        description: "Per node id, the engine's verdict on it: `{errors, dependent_outputs, class_type}`; empty for refusals of the request itself.",
        additionalProperties: anyObject('errors (type, message, details, extra_info), dependent_outputs, class_type'),
      },
    },
    ['code', 'message', 'error', 'node_errors'],
    { description: "The cloud contract's `{code, message}` and the reference engine's `{error, node_errors}` in one body." },
  ),
  PromptRequest: promptRequest(),
  PromptResponse: obj(
    {
      prompt_id: str('The job id', { format: 'uuid' }),
      number: int("The job's submission sequence number (the reference's queue counter)"),
      node_errors: anyObject('Always empty: a workflow with errors is refused whole'),
    },
    ['prompt_id', 'number', 'node_errors'],
  ),
  PromptInfo: obj({ exec_info: obj({ queue_remaining: int("The caller's queued and running jobs") }, ['queue_remaining']) }, ['exec_info']),
  NodeInfo: {
    ...obj({
      input: anyObject('`required`, and `optional` / `hidden` when the class has them: input name to its spec'),
      input_order: { type: 'object', additionalProperties: { type: 'array', items: str() } },
      output: { type: 'array', items: str() },
      output_is_list: { type: 'array', items: { type: 'boolean' } },
      output_name: { type: 'array', items: str() },
      name: str(),
      display_name: str(),
      description: str(),
      python_module: str(),
      category: str(),
      output_node: { type: 'boolean' },
      deprecated: { type: 'boolean' },
      experimental: { type: 'boolean' },
      api_node: { type: 'boolean', description: 'A partner node (calls an external service; needs extra_data.api_key_platform_org)' },
    }),
    additionalProperties: true,
  },
  ObjectInfo: { type: 'object', description: 'Node class name to its definition', additionalProperties: { $ref: '#/components/schemas/NodeInfo' } },
  UploadResult: obj(
    {
      name: str('The stored name, `<blake3 hex><.ext>`: what a LoadImage `image` input takes'),
      subfolder: str('Always empty: the namespace is flat'),
      type: str(undefined, { enum: [...FILE_TYPES] }),
      metadata: obj({ is_mask: { type: 'boolean' }, original_hash: str('blake3 hex of the original', { nullable: true }) }, undefined, {
        description: 'Mask uploads only',
      }),
    },
    ['name', 'subfolder', 'type'],
  ),
  FileRef: fileRef,
  QueueItem: {
    type: 'array',
    description: '`[number, prompt_id, workflow, output_node_ids, {create_time}]` (create_time in Unix milliseconds)',
    items: { oneOf: [{ type: 'integer' }, str(), anyObject('workflow, or {create_time}'), { type: 'array', items: str() }] },
    minItems: 5,
    maxItems: 5,
  },
  QueueInfo: obj(
    {
      queue_running: { type: 'array', items: { $ref: '#/components/schemas/QueueItem' }, description: 'Oldest first, at most 1000' },
      queue_pending: { type: 'array', items: { $ref: '#/components/schemas/QueueItem' }, description: 'Oldest first, at most 1000' },
    },
    ['queue_running', 'queue_pending'],
  ),
  ManageRequest: describeProperties(openApiSchema(ManageBody), {
    delete: 'Job ids; unknown ones and those of other accounts are skipped',
    clear: 'POST /queue: cancel every pending job; POST /history: take every finished job out of the history',
  }),
  QueueManageResponse: obj({ deleted: { type: 'array', items: str(), description: 'Every job this call canceled' }, cleared: { type: 'boolean' } }, [
    'deleted',
    'cleared',
  ]),
  InterruptRequest: describeProperties(openApiSchema(InterruptBody), {
    prompt_id: 'Only this job, if it is running; without it every running job of the caller',
  }),
  FreeRequest: describeProperties(openApiSchema(FreeBody), {
    unload_models: 'Accepted; nothing to unload here',
    free_memory: 'Accepted; nothing to free here',
  }),
  JobStatusResponse: obj(
    {
      id: str(undefined, { format: 'uuid' }),
      status: status('Where the job is'),
      created_at: str(undefined, { format: 'date-time' }),
      updated_at: str(undefined, { format: 'date-time' }),
      last_state_update: str(undefined, { format: 'date-time' }),
      started_at: str(undefined, { format: 'date-time', nullable: true }),
      completed_at: str(undefined, { format: 'date-time', nullable: true }),
      assigned_inference: str('Always null', { nullable: true }),
      error_message: str('The error of a failed job', { nullable: true }),
    },
    ['id', 'status', 'created_at', 'updated_at'],
  ),
  History: {
    type: 'object',
    description: "prompt_id to the reference engine's history entry `{prompt, outputs, status, meta}`, newest first",
    additionalProperties: obj({
      prompt: { type: 'array', description: '`[number, prompt_id, workflow, extra_data, output_node_ids]`', items: {} },
      outputs: { type: 'object', additionalProperties: anyObject('`images` / `video` / `audio`: lists of FileRef') },
      status: obj({
        status_str: str(undefined, { enum: ['success', 'error'] }),
        completed: { type: 'boolean' },
        messages: { type: 'array', items: {} },
      }),
      meta: anyObject('Per node id: node_id, display_node, parent_node, real_node_id'),
    }),
  },
  ExecutionError: obj(
    {
      node_id: str(undefined, { nullable: true }),
      node_type: str(undefined, { nullable: true }),
      exception_message: str(),
      exception_type: str(),
      traceback: { type: 'array', items: str() },
      current_inputs: anyObject(''),
      current_outputs: anyObject(''),
    },
    ['exception_message', 'exception_type', 'traceback'],
  ),
  JobEntry: obj(
    {
      id: str(undefined, { format: 'uuid' }),
      status: status('Cloud status'),
      create_time: int('Unix seconds'),
      execution_error: { $ref: '#/components/schemas/ExecutionError' },
      preview_output: anyObject('A FileRef plus nodeId and mediaType (terminal jobs)'),
      outputs_count: { type: 'integer', description: 'Terminal jobs only' },
      execution_start_time: int('Unix milliseconds (terminal jobs)'),
      execution_end_time: int('Unix milliseconds (terminal jobs)'),
    },
    ['id', 'status', 'create_time'],
  ),
  JobDetailResponse: obj(
    {
      id: str(undefined, { format: 'uuid' }),
      status: status('Cloud status'),
      create_time: int('Unix seconds'),
      update_time: int('Unix seconds'),
      workflow: anyObject('The workflow in API format'),
      execution_error: { $ref: '#/components/schemas/ExecutionError' },
      preview_output: anyObject('A FileRef plus nodeId and mediaType (terminal jobs)'),
      outputs_count: { type: 'integer' },
      outputs: anyObject('Per node id: `images` / `video` / `audio` lists of FileRef (terminal jobs)'),
      execution_status: anyObject('status_str, completed, messages (terminal jobs)'),
      execution_meta: anyObject('Per node id display metadata (terminal jobs)'),
      execution_start_time: int('Unix milliseconds'),
      execution_end_time: int('Unix milliseconds'),
    },
    ['id', 'status', 'create_time', 'update_time', 'workflow'],
  ),
  JobsListResponse: obj(
    {
      jobs: { type: 'array', items: { $ref: '#/components/schemas/JobEntry' } },
      pagination: obj({ offset: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, has_more: { type: 'boolean' } }, [
        'offset',
        'limit',
        'total',
        'has_more',
      ]),
    },
    ['jobs', 'pagination'],
  ),
  SystemStatsResponse: obj(
    {
      system: obj(
        {
          os: str(),
          python_version: str('Always n/a'),
          embedded_python: { type: 'boolean' },
          comfyui_version: str("This service's version"),
          cloud_version: str("This service's version"),
          pytorch_version: str('Always n/a'),
          argv: { type: 'array', items: str() },
          ram_total: { type: 'number' },
          ram_free: { type: 'number' },
          runtime: str('The JavaScript runtime'),
        },
        ['os', 'python_version', 'embedded_python', 'comfyui_version', 'pytorch_version', 'argv', 'ram_total', 'ram_free'],
      ),
      devices: { type: 'array', items: anyObject('Always empty: the engine is no device this process can describe') },
    },
    ['system', 'devices'],
  ),
  Features: {
    ...obj({ supports_preview_metadata: { type: 'boolean' }, max_upload_size: { type: 'integer', description: 'Bytes' } }, [
      'supports_preview_metadata',
      'max_upload_size',
    ]),
    additionalProperties: true,
  },
};
