// The local video provider: renders the multi-frame animation in process
// (render.ts, apng.ts), no GPU and no vendor. Key frames given by URL are
// fetched through the outbound guard; renders run one at a time (the rest
// wait as `queueing`). State lives in memory: after a restart the provider
// answers `unknown` and the task system creates the render again.

import { isUrlRef, loadImageRef } from '../../../lib/image/ref.ts';
import type { UrlPolicy } from '../../../lib/net/url-guard.ts';
import type { ProviderTaskState, VideoProvider, VideoRequest } from '../../video.ts';
import { MAX_IMAGE_BYTES } from '../../video-limits.ts';
import { localKeyFrameProblem } from './key-frame.ts';
import { prepareKeyFrame, renderMultiframe } from './render.ts';

/** A finished render nobody asked about is dropped after this long. */
const KEEP_MS = 3600_000;

export interface LocalVideoProvider extends VideoProvider {
  /** Stops every render (the service is closing). */
  close(): void;
}

export interface LocalVideoOptions {
  policy: UrlPolicy;
  /** Largest key frame, bytes (base64 decoded or downloaded). Default MAX_IMAGE_BYTES (10 MiB). */
  maxImageBytes?: number;
  /** Per key frame download. Default 30 s. */
  downloadTimeoutMs?: number;
  /** Renders at once. Default 1: rendering is CPU work on the service's own thread. */
  concurrency?: number;
}

/** A problem with the caller's own input: its message may be shown to the caller. */
class InputProblem extends Error {}

type Entry = { state: ProviderTaskState; at: number; controller: AbortController };

/** `start_image` or `image_settings[i].key_image`, for the key frame at anchor `i`. */
const anchorField = (i: number, hasStart: boolean) =>
  hasStart ? (i === 0 ? 'start_image' : `image_settings[${i - 1}].key_image`) : `image_settings[${i}].key_image`;

export function createLocalVideoProvider(opts: LocalVideoOptions): LocalVideoProvider {
  const maxBytes = opts.maxImageBytes ?? MAX_IMAGE_BYTES;
  const concurrency = opts.concurrency ?? 1;
  const entries = new Map<string, Entry>();
  const waiting: Array<() => void> = [];
  let running = 0;

  async function render(request: VideoRequest, signal: AbortSignal) {
    const hasStart = request.start_image !== '';
    const refs = [...(hasStart ? [request.start_image] : []), ...request.image_settings.map((s) => s.key_image)];
    const canvases: Uint8Array[] = [];
    for (const [i, ref] of refs.entries()) {
      try {
        const bytes = await loadImageRef(ref, { ...opts.policy, maxBytes, timeoutMs: opts.downloadTimeoutMs, signal });
        canvases.push(prepareKeyFrame(bytes, request.resolution));
      } catch (err) {
        if (signal.aborted) throw err;
        throw new InputProblem(`${anchorField(i, hasStart)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const durations = request.image_settings.map((s) => s.duration);
    return renderMultiframe({ canvases, durations, hasStart, resolution: request.resolution, signal });
  }

  async function run(request: VideoRequest, entry: Entry) {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      if (entry.controller.signal.aborted) return;
      entry.state = { state: 'processing' };
      const video = await render(request, entry.controller.signal);
      entry.state = { state: 'success', video: { content_type: video.content_type, extension: video.extension, body: chunksOf(video.chunks) } };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      entry.state = { state: 'failed', reason, details: err instanceof InputProblem ? [reason] : [] };
    } finally {
      entry.at = Date.now();
      running--;
      waiting.shift()?.();
    }
  }

  return {
    name: 'local',
    pollIntervalMs: 100,
    check(request) {
      const problems: string[] = [];
      const hasStart = request.start_image !== '';
      const refs = [...(hasStart ? [request.start_image] : []), ...request.image_settings.map((s) => s.key_image)];
      refs.forEach((ref, i) => {
        if (isUrlRef(ref)) return;
        const problem = localKeyFrameProblem(ref);
        if (problem) problems.push(`${anchorField(i, hasStart)}: ${problem}`);
      });
      return problems;
    },
    async create(request) {
      const now = Date.now();
      for (const [id, e] of entries) if ((e.state.state === 'success' || e.state.state === 'failed') && now - e.at > KEEP_MS) entries.delete(id);
      const id = crypto.randomUUID();
      const entry: Entry = { state: { state: 'queueing' }, at: now, controller: new AbortController() };
      entries.set(id, entry);
      void run(request, entry);
      return { id };
    },
    async status(id) {
      const entry = entries.get(id);
      if (!entry) return { state: 'unknown' };
      // A finished render is handed over once: its bytes are not kept twice.
      if (entry.state.state === 'success' || entry.state.state === 'failed') entries.delete(id);
      return entry.state;
    },
    close() {
      for (const e of entries.values()) e.controller.abort(new DOMException('The service is closing.', 'AbortError'));
      entries.clear();
      for (const wake of waiting.splice(0)) wake();
    },
  };
}

async function* chunksOf(chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* chunks;
}
