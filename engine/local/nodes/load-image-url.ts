// LoadImageFromURL: fetches a PNG over http(s) into IMAGE + MASK. Redirects
// are followed by hand so every hop's host is checked (see url-guard.ts for
// what is refused and the DNS limitation); size and time are bounded while
// streaming. Every failure is an ImageDownloadError.
import { defineNode, type NodeRunContext } from '../define-node.ts';
import { decodeImageFile, readBody } from './image-load.ts';
import { forbiddenHostReason } from './url-guard.ts';

const MAX_REDIRECTS = 5;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

export class ImageDownloadError extends Error {
  override name = 'ImageDownloadError';
  readonly exception_type = 'ImageDownloadError';
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function checkUrl(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ImageDownloadError(`only http and https URLs can be loaded, not ${url.protocol}`);
  }
  const reason = allowPrivate ? null : forbiddenHostReason(url.hostname);
  if (reason) throw new ImageDownloadError(`refusing to fetch ${url.host}: it is ${reason}`);
}

async function download(start: URL, ctx: NodeRunContext, signal: AbortSignal): Promise<Uint8Array> {
  const allowPrivate = ctx.settings.allowPrivateUrls === true;
  const maxBytes = positive(ctx.settings.maxDownloadBytes, DEFAULT_MAX_BYTES);
  let url = start;
  for (let hop = 0; ; hop++) {
    checkUrl(url, allowPrivate);
    const res = await fetch(url, { redirect: 'manual', signal, headers: { accept: 'image/png,image/*;q=0.8' } });
    if (res.status >= 300 && res.status < 400 && res.status !== 304) {
      await res.body?.cancel().catch(() => {});
      const location = res.headers.get('location');
      if (!location) throw new ImageDownloadError(`HTTP ${res.status} redirect without a Location from ${url.host}`);
      if (hop >= MAX_REDIRECTS) throw new ImageDownloadError(`more than ${MAX_REDIRECTS} redirects`);
      url = new URL(location, url);
      continue;
    }
    // Browsers hide manual redirects; following one blind would skip the host check.
    if (res.type === 'opaqueredirect') throw new ImageDownloadError('this runtime hides redirects, so they cannot be checked');
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new ImageDownloadError(`HTTP ${res.status} from ${url.host}`);
    }
    const tooBig = (n: number): never => {
      throw new ImageDownloadError(`the image is larger than the ${maxBytes}-byte limit (${n} bytes or more)`);
    };
    const declared = Number(res.headers.get('content-length'));
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => {});
      tooBig(declared);
    }
    if (!res.body) throw new ImageDownloadError(`empty response from ${url.host}`);
    return readBody(res.body, maxBytes, tooBig);
  }
}

export const loadImageFromUrl = defineNode({
  name: 'LoadImageFromURL',
  display_name: 'Load Image (from URL)',
  category: 'image',
  required: { url: ['STRING', { default: '', multiline: false }] },
  outputs: [{ type: 'IMAGE' }, { type: 'MASK' }],
  // The same URL can serve different bytes each time.
  cacheable: false,
  async run(inputs, ctx) {
    const timeoutMs = positive(ctx.settings.downloadTimeoutMs, DEFAULT_TIMEOUT_MS);
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      let start: URL;
      try {
        start = new URL(String(inputs.url ?? '').trim());
      } catch {
        throw new ImageDownloadError(`not a valid URL: ${String(inputs.url)}`);
      }
      const bytes = await download(start, ctx, AbortSignal.any([ctx.signal, timeout]));
      const { image, mask } = decodeImageFile(bytes);
      return { outputs: [image, mask] };
    } catch (err) {
      // A cancel is not a download failure: let the executor see the abort.
      if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
      if (err instanceof ImageDownloadError) throw err;
      if (timeout.aborted) throw new ImageDownloadError(`the download took longer than ${timeoutMs} ms`);
      const detail = err instanceof Error ? `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}` : String(err);
      throw new ImageDownloadError(`could not load the image: ${detail}`, { cause: err });
    }
  },
});
