// The small JSON bodies the cloud surface's POST routes take (queue,
// interrupt, history, free): a JSON object whatever the Content-Type says
// (clients of the reference engine often send none), no body at all read as
// `{}`, anything else a 400.
import { isRecord } from '../../lib/is-record.ts';
import { invalid } from '../errors.ts';
import { readJson } from '../http/read-json.ts';

const MAX_BODY_BYTES = 256 * 1024;

/** The JSON object of a small POST body; none at all reads as `{}`. */
export async function readObject(request: Request): Promise<Record<string, unknown>> {
  const body = await readJson(request, MAX_BODY_BYTES, { anyContentType: true, whenEmpty: {} });
  if (!isRecord(body)) throw invalid('The body must be a JSON object.', '(body)', 'must be an object');
  return body;
}
