// dashboard/api.js: the v2 API as the page calls it. URLs are relative to the
// dashboard's root (the folder above this module), so a mount prefix needs no
// configuration; the key, kept in sessionStorage, goes on every call; a
// failure is an ApiError with the envelope's code and message.
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written here reaches the browser as written
export const API_SCRIPT = String.raw`
const ROOT = new URL('../', import.meta.url);
const KEY = 'graphrun.key';
const OPERATOR = 'graphrun.operator-token';

export const apiUrl = (path) => new URL(path, ROOT).href;
export const jobPath = (id) => 'api/v2/jobs/' + encodeURIComponent(id);
export const contentPath = (id) => 'api/v2/assets/' + encodeURIComponent(id) + '/content';

// Storage can be refused (privacy settings): the page then works for this load only.
const memory = {};
function read(name) {
  try { return sessionStorage.getItem(name) || ''; } catch { return memory[name] || ''; }
}
function write(name, value) {
  memory[name] = value;
  try { if (value) sessionStorage.setItem(name, value); else sessionStorage.removeItem(name); } catch { /* kept in memory */ }
}
export const getKey = () => read(KEY);
export const setKey = (value) => write(KEY, value);
export const getOperatorToken = () => read(OPERATOR);
export const setOperatorToken = (value) => write(OPERATOR, value);

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || null;
  }
}

const unauthorized = new Set();
/** fn(error) runs whenever a call made with the account's key is answered 401. */
export const onUnauthorized = (fn) => unauthorized.add(fn);

async function errorOf(res) {
  let code = 'http_' + res.status;
  let message = res.statusText || 'The request failed.';
  let details = null;
  try {
    const body = await res.json();
    if (body && body.error && typeof body.error === 'object') {
      code = String(body.error.code || code);
      message = String(body.error.message || message);
      details = body.error.details || null;
    }
  } catch { /* not the envelope */ }
  return new ApiError(res.status, code, message, details);
}

/**
 * fetch() of an API path with the account's key, or with token when one is
 * given ('' for none: calls with another token are not the account's 401s).
 * Resolves to the Response when it is 2xx, else rejects with an ApiError.
 */
export async function call(path, init, token) {
  const own = token === undefined;
  const bearer = own ? getKey() : token;
  const headers = new Headers((init && init.headers) || undefined);
  if (bearer) headers.set('Authorization', 'Bearer ' + bearer);
  let res;
  try {
    res = await fetch(apiUrl(path), Object.assign({}, init, { headers }));
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The service could not be reached.');
  }
  if (res.ok) return res;
  const error = await errorOf(res);
  if (own && res.status === 401) for (const fn of unauthorized) fn(error);
  throw error;
}

export const getJson = async (path, init, token) => (await call(path, init, token)).json();

export const postJson = (path, body) =>
  getJson(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
`;
