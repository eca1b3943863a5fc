// Reads the multipart form of POST /upload/image and /upload/mask: the one
// file part `image` goes to the caller's `take` as it streams (the image
// route stages it into the blob store, the mask route keeps it to decode),
// the short text fields are gathered, other parts are drained and skipped.
// Size: the body is capped at ctx.config.maxUploadBytes (413); a body that is not
// multipart is a 415 and one that cannot be parsed a 400.
import type { ServiceContext } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { MultipartError, MultipartLimitError, type MultipartPart, multipartBoundary, parseMultipart, readPartText } from '../http/multipart.ts';

const MAX_FIELD_BYTES = 64 * 1024;

export interface UploadForm<T> {
  file: T;
  /** The file part's own name and declared media type, as the client sent them. */
  filename: string | null;
  contentType: string | null;
  fields: Record<string, string>;
}

export interface FormReader<T> {
  /** Text fields read (at most once each); any other part is skipped. */
  fields: readonly string[];
  take(part: MultipartPart): Promise<T>;
  /** Releases what `take` made when the request fails after it. */
  drop(file: T): Promise<void>;
}

export function tooLarge(max: number): ApiError {
  return new ApiError('payload_too_large', `The upload is larger than the limit of ${max} bytes.`, { limit_bytes: max });
}

export async function readUploadForm<T>(request: Request, ctx: ServiceContext, reader: FormReader<T>): Promise<UploadForm<T>> {
  const boundary = multipartBoundary(request.headers.get('content-type'));
  if (!boundary) throw new ApiError('unsupported_media_type', 'The body must be multipart/form-data with a boundary.');
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > ctx.config.maxUploadBytes) throw tooLarge(ctx.config.maxUploadBytes);
  if (!request.body) throw new ApiError('malformed_request', 'The request has no body.');
  const fields: Record<string, string> = {};
  let taken: { file: T; filename: string | null; contentType: string | null } | null = null;
  try {
    for await (const part of parseMultipart(request.body, boundary, { maxBodyBytes: ctx.config.maxUploadBytes })) {
      if (part.name === 'image') {
        if (taken) throw invalid('image: given more than once', 'image', 'must appear once');
        taken = { file: await reader.take(part), filename: part.filename, contentType: part.contentType };
      } else if (reader.fields.includes(part.name)) {
        if (part.name in fields) throw invalid(`${part.name}: given more than once`, part.name, 'must appear once');
        fields[part.name] = await readPartText(part, MAX_FIELD_BYTES);
      }
    }
    if (!taken) throw invalid('image: is required (a file part named "image")', 'image', 'is required');
    return { ...taken, fields };
  } catch (err) {
    if (taken) await reader.drop(taken.file);
    if (err instanceof MultipartLimitError) throw tooLarge(ctx.config.maxUploadBytes);
    if (err instanceof MultipartError) throw new ApiError('malformed_request', `The multipart body could not be parsed: ${err.message}.`);
    throw err;
  }
}

/** `overwrite`: 'true' | 'false' (also 1 / 0, any case); it changes nothing, names being content hashes. */
export function checkOverwrite(raw: string | undefined): void {
  if (raw === undefined || /^(true|false|1|0|)$/i.test(raw.trim())) return;
  throw invalid('overwrite: must be "true" or "false"', 'overwrite', 'not allowed');
}
