// OpenAPI operations of the cloud surface's file routes (files-routes.ts),
// keyed as that table declares them, without the `/api` prefix.
import type { Json, Operations } from '../http/openapi.ts';
import { BAD_REQUEST, COMMON, error, ok } from './openapi-parts.ts';

const query = (name: string, description: string, schema: Json = { type: 'string' }, required = false): Json => ({
  name,
  in: 'query',
  required,
  schema,
  description,
});

const uploadErrors = {
  '400': BAD_REQUEST,
  '413': error('payload_too_large: the body is over the upload limit'),
  '415': error('unsupported_media_type: the body is not multipart/form-data'),
};

const TYPE = {
  type: 'string',
  enum: ['input', 'temp', 'output'],
  description: 'A tag of the flat namespace, not a folder; `temp` files are kept for a day. Default input.',
};
const IGNORED = { type: 'string', description: 'Accepted and ignored: the namespace is flat.' };

export const FILES_OPERATIONS: Operations = {
  'GET /object_info': {
    operationId: 'getObjectInfo',
    tags: ['node'],
    summary: "Every node class the engine has, in the reference engine's format",
    responses: { '200': ok('Node class name to definition.', 'ObjectInfo'), ...COMMON },
  },
  'GET /object_info/:class': {
    operationId: 'getNodeClassInfo',
    tags: ['node'],
    summary: 'One node class',
    parameters: [{ name: 'class', in: 'path', required: true, schema: { type: 'string' }, description: 'The node class name' }],
    responses: {
      '200': ok('`{<class>: definition}`, or `{}` for a class the engine does not have (as the reference answers).', 'ObjectInfo'),
      ...COMMON,
    },
  },
  'POST /upload/image': {
    operationId: 'uploadImage',
    tags: ['file'],
    summary: 'Upload an image (streamed) into the flat, content-addressed namespace',
    description:
      'Stored as `<blake3 hex><.ext>`, the name a workflow input takes. A PNG beyond 16384 px per edge or 64 megapixels is a 400; a body beyond the upload limit (GET /api/features `max_upload_size`) a 413.',
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['image'],
            properties: {
              image: { type: 'string', format: 'binary' },
              type: TYPE,
              overwrite: { type: 'string', enum: ['true', 'false'], description: 'Accepted; no effect (names are content hashes).' },
              subfolder: IGNORED,
            },
          },
        },
      },
    },
    responses: { '200': ok('Stored.', 'UploadResult'), ...uploadErrors, ...COMMON },
  },
  'POST /upload/mask': {
    operationId: 'uploadMask',
    tags: ['file'],
    summary: "Apply a mask's alpha channel to one of the caller's images, stored as a new PNG",
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['image', 'original_ref'],
            properties: {
              image: { type: 'string', format: 'binary', description: 'The mask, a PNG' },
              original_ref: { type: 'string', description: "JSON `{filename, subfolder?, type?}` naming one of the caller's files" },
              type: TYPE,
              overwrite: { type: 'string', enum: ['true', 'false'], description: 'Accepted; no effect.' },
              subfolder: IGNORED,
            },
          },
        },
      },
    },
    responses: {
      '200': ok('Stored, with `metadata`.', 'UploadResult'),
      ...uploadErrors,
      '404': error('not_found: the caller has no file named by original_ref'),
      ...COMMON,
    },
  },
  'GET /view': {
    operationId: 'viewFile',
    tags: ['file'],
    summary: "Redirect to a short-lived signed URL of one of the caller's files",
    description: 'The signed URL is fetched without credentials. `channel` and `preview` are ignored: the file is served as stored.',
    parameters: [
      query('filename', 'A name an upload or a job output gave (`name.png [input]` also accepted)', { type: 'string' }, true),
      query('subfolder', 'Accepted and ignored: the namespace is flat.'),
      query('type', 'input, temp or output (default output); does not narrow the lookup.', { type: 'string', enum: ['input', 'temp', 'output'] }),
    ],
    responses: {
      '302': { description: 'Location: the signed content URL.', headers: { Location: { schema: { type: 'string', format: 'uri' } } } },
      '400': BAD_REQUEST,
      '404': error('not_found: the caller has no file of that name'),
      ...COMMON,
    },
  },
};
