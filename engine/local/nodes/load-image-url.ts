// LoadImageFromURL: fetches a PNG over http(s) into IMAGE + MASK through the
// service's outbound guard (lib/net/url-guard.ts: every redirect hop
// and, with a resolver in the settings, every resolved address checked; size
// and time bounded while streaming). Every failure is an ImageDownloadError,
// but for an image too large for the job's memory (OOMError).

import { downloadBytes, OutboundUrlError, type ResolveHost } from '../../../lib/net/url-guard.ts';
import { defineNode } from '../define-node.ts';
import { OOMError } from '../memory-budget.ts';
import { decodeImageFile } from './image-load.ts';

const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

export class ImageDownloadError extends Error {
  override name = 'ImageDownloadError';
  readonly exception_type = 'ImageDownloadError';
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
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
    let url: URL;
    try {
      url = new URL(String(inputs.url ?? '').trim());
    } catch {
      throw new ImageDownloadError(`not a valid URL: ${String(inputs.url)}`);
    }
    const resolveHost = ctx.settings.resolveHost;
    try {
      const { bytes } = await downloadBytes(url, {
        // Only `true` opens private hosts; a merely truthy setting does not.
        allowPrivate: ctx.settings.allowPrivateUrls === true,
        resolveHost: typeof resolveHost === 'function' ? (resolveHost as ResolveHost) : undefined,
        maxBytes: positive(ctx.settings.maxDownloadBytes, DEFAULT_MAX_BYTES),
        timeoutMs: positive(ctx.settings.downloadTimeoutMs, DEFAULT_TIMEOUT_MS),
        signal: ctx.signal,
        headers: { accept: 'image/png,image/*;q=0.8' },
      });
      const { image, mask } = decodeImageFile(bytes, ctx.maxBytes, `Node ${ctx.node_id} (LoadImageFromURL)`);
      return { outputs: [image, mask] };
    } catch (err) {
      // A cancel is not a download failure: let the executor see the abort.
      if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
      // An image too large for the job's memory is not a download failure either.
      if (err instanceof OOMError) throw err;
      if (err instanceof OutboundUrlError) {
        throw new ImageDownloadError(err.kind === 'network' ? `could not load the image: ${err.message}` : err.message, { cause: err });
      }
      const detail = err instanceof Error ? err.message : String(err);
      throw new ImageDownloadError(`could not load the image: ${detail}`, { cause: err });
    }
  },
});
