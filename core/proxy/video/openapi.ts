// The OpenAPI document of the video surface, served at
// /proxy/videogen/openapi.json and built from its route table: the
// multiframe request converted from the valibot schema that validates it
// (schema.ts), the task record as record.ts writes it, errors in the
// surface's `{message, details}` body.
import * as L from '../../../providers/video-limits.ts';
import { describeProperties, type Json, jsonRef, openApiDocument, openApiSchema, PROXY_AUTH } from '../../http/openapi.ts';
import { AssetSchema } from '../../schemas.ts';
import { MultiframeBody } from './schema.ts';
import { TASK_STATES } from './states.ts';

const error = (description: string): Json => ({ description, content: jsonRef('VideoError') });
const taskId = { name: 'task_id', in: 'path', required: true, schema: { type: 'string' } };

const OPERATIONS: Record<string, Json> = {
  'POST /proxy/videogen/multiframe': {
    operationId: 'createMultiframeTask',
    summary: `Create a video task from ${L.MIN_FRAMES} to ${L.MAX_FRAMES} key frames`,
    description:
      'Validated whole: every problem of the body is one entry of `details` (`<field>: <reason>`), unknown fields included. Credits are charged on creation. The task then runs in the background; poll GET /proxy/videogen/tasks/{task_id}, or give `callback_url`.',
    requestBody: { required: true, content: jsonRef('MultiframeRequest') },
    responses: {
      '200': { description: 'The task, in state `created`.', content: jsonRef('VideoTask') },
      '400': error('The body is not valid (every problem in details), not JSON, or over the size limit'),
      '401': error('No or an unknown key'),
      '402': error('Not enough credits'),
      '422': error('The deployment is stopped (deployment_stopped): a retry cannot succeed until an operator starts it'),
      '429': error('The deployment is not ready yet (deployment_not_ready, with Retry-After): retry'),
      '500': error('A generic message; the cause is logged only'),
    },
    callbacks: {
      stateChange: {
        '{$request.body#/callback_url}': {
          post: {
            summary: 'Each state change of the task, in order; durable (survives a restart) and retried with backoff while the receiver fails',
            description:
              'Signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature headers) when the operator gave videoCallbacks a secret.',
            requestBody: { required: true, content: jsonRef('VideoTask') },
            responses: { '200': { description: 'Any 2xx acknowledges the delivery.' } },
          },
        },
      },
    },
  },
  'GET /proxy/videogen/tasks/:task_id': {
    operationId: 'getTask',
    summary: "One of the caller's tasks as it now is",
    parameters: [taskId],
    responses: {
      '200': { description: 'The task; once `success`, its `output`.', content: jsonRef('VideoTask') },
      '401': error('No or an unknown key'),
      '404': error("No such task (also another account's or an expired one)"),
      '500': error('A generic message; the cause is logged only'),
    },
  },
  'GET /proxy/videogen/openapi.json': {
    operationId: 'getOpenApi',
    summary: 'This document',
    security: [],
    responses: { '200': { description: 'OpenAPI 3.0 document.' } },
  },
};

const multiframe = describeProperties(openApiSchema(MultiframeBody), {
  image_settings: `${L.MIN_FRAMES} to ${L.MAX_FRAMES} key frames: key_image (base64, a data: URI or an http(s) URL; at most ${L.MAX_IMAGE_BYTES} bytes), duration (seconds, ${L.MIN_DURATION} to ${L.MAX_DURATION}), prompt (at most ${L.MAX_PROMPT_CHARS} characters)`,
  start_image: 'The first frame (base64, a data: URI or an http(s) URL); the first key frame when absent',
  callback_url: 'An http(s) URL receiving the task record at each state change (private addresses refused unless the operator allows them)',
  payload: `Passed through to the generator; at most ${L.MAX_PAYLOAD_CHARS} characters`,
});

const SCHEMAS: Record<string, Json> = {
  MultiframeRequest: multiframe,
  VideoError: {
    type: 'object',
    required: ['message', 'details'],
    properties: {
      message: { type: 'string' },
      details: { type: 'array', items: { type: 'string' }, description: '`<field>: <reason>` per problem' },
    },
  },
  VideoTask: {
    type: 'object',
    required: ['task_id', 'state', 'credits', 'created_at', 'updated_at', 'image_settings', 'model', 'resolution', 'payload', 'start_image'],
    properties: {
      task_id: { type: 'string' },
      state: { type: 'string', enum: [...TASK_STATES] },
      credits: { type: 'integer' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      ...(multiframe.properties as Json),
      start_image: { type: 'string', description: 'Empty when the request had none' },
      output: { allOf: [{ $ref: '#/components/schemas/Asset' }], description: 'The video as a v2 Asset with a signed URL (state success)' },
      error: { allOf: [{ $ref: '#/components/schemas/VideoError' }], description: 'Why the task failed (state failed)' },
    },
  },
  Asset: openApiSchema(AssetSchema),
};

/** The document of the video surface's route table (every route of it, or this throws). */
export function videoOpenApi(routes: ReadonlyArray<readonly [method: string, path: string, ...rest: unknown[]]>): Json {
  return openApiDocument(
    {
      title: 'graphrun multi-frame video generation',
      description: 'Video tasks from key frames. Every error is `{message, details}`, routing answers (404, 405) included.',
      ...PROXY_AUTH,
      schemas: SCHEMAS,
      operation: (method, path) => OPERATIONS[`${method} ${path}`],
    },
    routes,
  );
}
