// Delivers each state change of a video task to its callback_url: the task
// record as JSON, POSTed through the outbound guard (private hosts refused
// unless the operator allows them), in order per task, retried with
// exponential backoff while the receiver fails, never holding up the task or
// the API. Deliveries live in memory: a restart loses those still pending.
// Every failure is logged; a refused or invalid URL is not retried.
import { OutboundUrlError, parseOutboundUrl, postJson, type UrlPolicy } from '../../../lib/net/url-guard.ts';
import { pause } from '../../../lib/pause.ts';
import type { CallbackSettings } from '../../config.ts';
import { errorText } from '../../log.ts';
import type { Logger } from '../../types.ts';

export interface CallbackSender {
  /** Queues one delivery of `body` (built now, so it shows this state) after the task's earlier ones. */
  send(taskId: string, url: string, state: string, body: () => Promise<unknown>): void;
  /** Resolves when every queued delivery has ended. */
  idle(): Promise<void>;
}

export function createCallbackSender(deps: { policy: UrlPolicy; logger: Logger; options: CallbackSettings; signal: AbortSignal }): CallbackSender {
  const { policy, logger, options, signal } = deps;
  const chains = new Map<string, Promise<void>>();

  async function deliver(taskId: string, url: string, state: string, json: string): Promise<void> {
    const log = { task_id: taskId, state, callback_url: url };
    let target: URL;
    try {
      target = parseOutboundUrl(url);
    } catch (err) {
      logger.warn('video callback not sent: invalid URL', { ...log, error: (err as Error).message });
      return;
    }
    for (let attempt = 1; ; attempt++) {
      let failure: string;
      try {
        const { status } = await postJson(target, json, {
          ...policy,
          timeoutMs: options.timeoutMs,
          signal,
          headers: { 'user-agent': 'graphrun-videogen-callback' },
        });
        if (status >= 200 && status < 300) return;
        failure = `HTTP ${status}`;
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof OutboundUrlError && (err.kind === 'refused' || err.kind === 'invalid')) {
          logger.warn('video callback refused by the outbound guard', { ...log, error: err.message });
          return;
        }
        failure = err instanceof Error ? err.message : String(err);
      }
      if (attempt >= options.attempts) {
        logger.error('video callback given up', { ...log, attempts: attempt, error: failure });
        return;
      }
      const delay = Math.min(options.initialDelayMs * 2 ** (attempt - 1), options.maxDelayMs);
      logger.warn('video callback failed; retrying', { ...log, attempt, retry_in_ms: delay, error: failure });
      await pause(delay, signal);
    }
  }

  return {
    send(taskId, url, state, body) {
      const before = chains.get(taskId) ?? Promise.resolve();
      // The body is built before waiting: it must show the state it announces.
      const payload = body().then((b) => JSON.stringify(b));
      // Handled in the chain below, maybe later than a failure: not an unhandled rejection.
      payload.catch(() => undefined);
      const next = before
        .then(() => payload)
        .then((json) => deliver(taskId, url, state, json))
        .catch((err: unknown) => {
          if (signal.aborted) logger.warn('video callback dropped: the service is closing', { task_id: taskId, state });
          else logger.error('video callback failed', { task_id: taskId, state, error: errorText(err) });
        })
        .finally(() => {
          if (chains.get(taskId) === next) chains.delete(taskId);
        });
      chains.set(taskId, next);
    },
    async idle() {
      while (chains.size > 0) await Promise.all([...chains.values()]);
    },
  };
}
