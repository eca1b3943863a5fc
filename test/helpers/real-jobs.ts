// Helpers of the worker engine's v2 tests against real engine servers: a
// graphrun service whose pool is those servers, what a server itself says of
// a prompt (/history, /queue), a workflow that keeps a server busy for
// seconds, and waits on a job's event stream rather than on time.
import { expect } from 'vitest';
import { type ComfyEngineOptions, createComfyEngine } from '../../engine/comfyui/engine.ts';
import type { Workflow } from '../../engine/types.ts';
import type { ServiceOptions } from '../../index.ts';
import { decodePng } from '../../lib/png/index.ts';
import { type Harness, startHarness } from './harness.ts';
import { jobNow, sleep } from './jobs.ts';
import type { RealComfyUI } from './real-comfyui.ts';
import { openEvents } from './sse-client.ts';
import type { EngineLogLine } from './worker-service.ts';

/** The bound of every wait: a real server on 2 busy shared cores may take tens of seconds per job. */
export const LIMIT_MS = 5 * 60_000;
/** A test's own bound: a few such waits. */
export const TEST_MS = 15 * 60_000;

export interface RealService extends Harness {
  /** What the engine logged, in order. */
  log: EngineLogLine[];
}

/**
 * graphrun (SQLite, fs blobs, behind the Node adapter) running jobs on these
 * servers; resolves once the engine has found every one of them up.
 */
export async function serviceOn(
  servers: RealComfyUI[],
  engine: Partial<ComfyEngineOptions> = {},
  service: Partial<ServiceOptions> = {},
): Promise<RealService> {
  const log: EngineLogLine[] = [];
  const comfy = createComfyEngine({
    workers: servers.map((s) => s.url),
    healthIntervalMs: 200,
    log: (message, detail) => void log.push({ message, detail }),
    ...engine,
  });
  const h = await startHarness('node-server', {
    engine: comfy,
    // The local account's tier (free: one job at a time) would keep a second job from reaching the engine.
    tierLimits: { default: 8, free: 8 },
    maxConcurrentJobs: 8,
    progressIntervalMs: 0,
    ...service,
  }).catch(async (err) => {
    await comfy.close();
    throw err;
  });
  try {
    await eventually('the engine found every server up', () =>
      servers.every((s) => log.some((l) => l.message === 'worker is up' && l.detail?.worker === s.url)),
    );
  } catch (err) {
    await h.close();
    throw err;
  }
  return Object.assign(h, { log });
}

/** Polls `check` every `everyMs` (a real server computes on the same cores: no tight loop) until it holds; fails after LIMIT_MS. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, everyMs = 200): Promise<void> {
  const deadline = Date.now() + LIMIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(everyMs);
  }
}

export interface HistoryEntry {
  status: { status_str: string; completed: boolean; messages: Array<[string, Record<string, any>]> };
  outputs: Record<string, Record<string, any>>;
}

/** The server's own record of a prompt; null when it has none (never ran it, or restarted since). */
export async function historyOf(server: RealComfyUI, id: string): Promise<HistoryEntry | null> {
  const body = (await (await fetch(`${server.url}/history/${id}`)).json()) as Record<string, HistoryEntry>;
  return body[id] ?? null;
}

/** The data of the entry's first message of this type. */
export const messageOf = (entry: HistoryEntry, type: string) => entry.status.messages.find(([t]) => t === type)?.[1];

/** The server's own queue: ids of its running and pending prompts. */
export async function queueOf(server: RealComfyUI): Promise<{ running: string[]; pending: string[] }> {
  const body = (await (await fetch(`${server.url}/queue`)).json()) as { queue_running: unknown[][]; queue_pending: unknown[][] };
  return { running: body.queue_running.map((i) => String(i[1])), pending: body.queue_pending.map((i) => String(i[1])) };
}

/**
 * EmptyImage(640², color) -> `blurs` x ImageBlur (radius 12) -> SaveImage, as
 * nodes 'e', 'b1'..'bN', 's': several seconds of CPU per blur on the server,
 * which checks for an interrupt only between nodes.
 */
export function blurChain(color: number, blurs: number, prefix = 'blur'): Workflow {
  const workflow: Workflow = { e: { class_type: 'EmptyImage', inputs: { width: 640, height: 640, batch_size: 1, color } } };
  for (let i = 1; i <= blurs; i++) {
    workflow[`b${i}`] = { class_type: 'ImageBlur', inputs: { image: [i === 1 ? 'e' : `b${i - 1}`, 0], blur_radius: 12, sigma: 10 } };
  }
  workflow.s = { class_type: 'SaveImage', inputs: { images: [`b${blurs}`, 0], filename_prefix: prefix } };
  return workflow;
}

/** Resolves once the job's event stream says the server runs this node; fails if the job ends first. */
export async function nodeRuns(h: Harness, id: string, node: string): Promise<void> {
  const { sse } = await openEvents(h, id);
  if (!sse) throw new Error(`no event stream for job ${id}`);
  try {
    for (;;) {
      const event = await sse.nextEvent(LIMIT_MS);
      if (!event) throw new Error(`job ${id} ended before node ${node} ran`);
      if (event.event === 'progress' && event.json.current_node === node) return;
    }
  } finally {
    await sse.cancel();
  }
}

/** The Job once its event stream has ended (it does after the terminal status). */
export async function ended(h: Harness, id: string): Promise<any> {
  const { sse } = await openEvents(h, id);
  if (!sse) throw new Error(`no event stream for job ${id}`);
  await sse.readToEnd(LIMIT_MS);
  return jobNow(h, id);
}

/** An output's download: its bytes, checked against the size the job lists, and the Content-Type served. */
export async function download(h: Harness, output: { url: string; size_bytes: number }): Promise<{ bytes: Uint8Array; contentType: string | null }> {
  const res = await h.fetch(output.url);
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(bytes.length).toBe(output.size_bytes);
  return { bytes, contentType: res.headers.get('content-type') };
}

/** How many pixels of a PNG are more than 1 off `rgb` in some channel (the server truncates floats to bytes). */
export function pixelsOff(png: Uint8Array, rgb: number[]): number {
  const { data, channels, width, height } = decodePng(png);
  let off = 0;
  for (let p = 0; p < width * height; p++) {
    if ([0, 1, 2].some((c) => Math.abs(Math.round(data[p * channels + c] * 255) - rgb[c]) > 1)) off++;
  }
  return off;
}
