// JSON responses whose bytes are known when they are built. The Response is
// an ordinary one (any runtime, any consumer reads its body as usual), and
// its serialized text is also remembered beside it, so an adapter that can
// write a string directly (Node) sends it with a Content-Length instead of
// reading the Web stream back chunk by chunk.

const known = new WeakMap<Response, string>();

/** Like `Response.json(value, init)`, remembering the body for `knownBody`. */
export function jsonResponse(value: unknown, init?: ResponseInit): Response {
  const text = JSON.stringify(value) as string | undefined;
  // As Response.json does: undefined, a function or a symbol has no JSON form.
  if (text === undefined) throw new TypeError('Value is not JSON serializable');
  const headers = new Headers(init?.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = new Response(text, { status: init?.status, statusText: init?.statusText, headers });
  known.set(response, text);
  return response;
}

/**
 * The whole body of a response built by `jsonResponse`, or undefined for any
 * other response. Reading it does not touch `response.body`; a caller that
 * uses it must not read the stream as well.
 */
export function knownBody(response: Response): string | undefined {
  return known.get(response);
}
