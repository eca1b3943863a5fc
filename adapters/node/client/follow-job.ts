// Follows a job until it ends. Live through its Server-Sent Events stream
// (GET .../events, parsed with eventsource-parser): when the stream drops
// before the job ended it reconnects, sending Last-Event-ID if the server gave
// ids (ours gives none: its first frames on any connect are a full snapshot,
// which re-syncs as well). When the server serves no stream (501, 404, 429
// too_many_streams, not text/event-stream) or it keeps failing, it polls
// GET /api/v2/jobs/{id}. Either way the answer is the job read at the end:
// the contract makes polling the source of truth.
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type Api, isAbort } from './api.ts';
import { ApiError, apiErrorOf, ClientError } from './errors.ts';
import { isTerminal, type Job, type JobState } from './types.ts';

export interface FollowOptions {
  signal: AbortSignal;
  onUpdate(state: Partial<JobState>): void;
  /** A line about the connection (reconnecting, polling instead). */
  onNote?(text: string): void;
  /** Interval of GET polls when there is no stream, ms. */
  pollMs?: number;
  /** First wait before reconnecting, ms; the server's `retry:` field replaces it. */
  reconnectMs?: number;
  /** Connection failures in a row before streaming gives way to polling (and polling gives up). */
  maxFailures?: number;
}

type Outcome = { kind: 'ended' } | { kind: 'dropped'; why: string } | { kind: 'unavailable'; why: string };

/** `{status, queue_position}` (the contract's StatusEvent) or a whole Job (this service's): what a display needs. */
function stateOf(data: Record<string, unknown>): Partial<JobState> {
  const state: Partial<JobState> = {};
  if (typeof data.status === 'string') state.status = data.status;
  if ('queue_position' in data) state.queue_position = typeof data.queue_position === 'number' ? data.queue_position : null;
  if (typeof data.progress === 'object') state.progress = data.progress as JobState['progress'];
  return state;
}

export async function followJob(api: Api, job: Job, options: FollowOptions): Promise<Job> {
  const { signal, onUpdate, onNote = () => {}, pollMs = 1000, maxFailures = 5 } = options;
  const self = api.link(job.urls.self);
  const events = api.link(job.urls.events);
  let retryMs = options.reconnectMs ?? 500;
  let lastEventId: string | undefined;
  let status = job.status;
  let failures = 0;
  let streaming = true;

  /** One connection: reads frames until the stream ends. */
  async function stream(): Promise<Outcome> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    let res: Response;
    try {
      res = await api.fetch(events, { headers, signal });
    } catch (err) {
      if (isAbort(err) || !(err instanceof ClientError)) throw err;
      return { kind: 'dropped', why: err.message };
    }
    if (res.status === 401 || res.status === 403) throw await apiErrorOf(res, `GET ${events.pathname}`);
    if (!res.ok || !res.body || !/^text\/event-stream/i.test(res.headers.get('content-type') ?? '')) {
      await res.body?.cancel().catch(() => {});
      return { kind: 'unavailable', why: `the event stream answered ${res.status}` };
    }
    let heard = false;
    const parser = createParser({
      onEvent(event: EventSourceMessage) {
        if (event.id !== undefined) lastEventId = event.id;
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return; // not ours to understand (the contract's payloads are JSON)
        }
        if (typeof data !== 'object' || data === null) return;
        heard = true;
        if (event.event === 'status') {
          const state = stateOf(data as Record<string, unknown>);
          if (state.status !== undefined) status = state.status;
          onUpdate(state);
        } else if (event.event === 'progress') {
          onUpdate({ progress: data as JobState['progress'] });
        }
      },
      onRetry: (ms) => (retryMs = ms),
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        if (isTerminal(status)) break;
      }
    } catch (err) {
      if (signal.aborted) throw err;
      return { kind: 'dropped', why: `the event stream broke: ${(err as Error).message}` };
    } finally {
      await res.body.cancel().catch(() => {});
    }
    if (heard) failures = 0;
    return isTerminal(status) ? { kind: 'ended' } : { kind: 'dropped', why: 'the event stream ended early' };
  }

  async function poll(): Promise<void> {
    try {
      const fresh = await api.json<Job>(self, { signal });
      failures = 0;
      status = fresh.status;
      onUpdate(stateOf(fresh as unknown as Record<string, unknown>));
    } catch (err) {
      // A refusal (404, 401) will not change by asking again; an unreachable server may come back.
      if (isAbort(err) || err instanceof ApiError || !(err instanceof ClientError) || ++failures >= maxFailures) throw err;
      onNote(`${err.message}; retrying`);
    }
  }

  onUpdate(stateOf(job as unknown as Record<string, unknown>));
  while (!isTerminal(status)) {
    if (!streaming) {
      await sleep(pollMs, undefined, { signal });
      await poll();
      continue;
    }
    const outcome = await stream();
    if (outcome.kind === 'ended') break;
    if (outcome.kind === 'unavailable' || ++failures >= maxFailures) {
      streaming = false;
      failures = 0;
      onNote(`${outcome.why}; polling the job instead`);
      continue;
    }
    onNote(`${outcome.why}; reconnecting`);
    // Doubling while connections keep failing, from the server's `retry:` (or the default) again once one works.
    await sleep(Math.min(retryMs * 2 ** Math.max(0, failures - 1), 10_000), undefined, { signal });
  }
  return api.json<Job>(self, { signal });
}
