// The job hub's events as the storage's event bus carries them between
// instances. A channel per job (`job:<id>`: what its SSE streams hear) and
// per account (`account:<id>`: what its `/ws` peers hear). One bus message
// is a batch, `{"v":1,"e":[event, ...]}`, each event in the hub's own shape
// and serialised once; an engine preview's bytes travel as base64. What
// another version of the service might send and this one does not know is
// skipped, not guessed at.
import type { EngineEvent } from '../../engine/types.ts';
import { fromBase64, toBase64 } from '../../lib/base64.ts';
import { isRecord } from '../../lib/is-record.ts';
import { parseJson, stringifyJson } from '../../lib/json.ts';
import type { AccountEvent, HubEvent } from './hub.ts';

const VERSION = 1;

export const jobChannel = (jobId: string) => `job:${jobId}`;
export const accountChannel = (accountId: string) => `account:${accountId}`;

export function encodeBatch(events: readonly unknown[]): string {
  return `{"v":${VERSION},"e":[${events.map(stringifyJson).join(',')}]}`;
}

/** The events of a batch; none when it is not one this version reads. */
export function decodeBatch(payload: string): unknown[] {
  let batch: unknown;
  try {
    batch = parseJson(payload);
  } catch {
    return [];
  }
  return isRecord(batch) && batch.v === VERSION && Array.isArray(batch.e) ? batch.e : [];
}

/** An account event as JSON can carry it. */
export function wireAccountEvent(event: AccountEvent): unknown {
  if (event.type !== 'engine' || event.event.type !== 'preview') return event;
  const { bytes, ...rest } = event.event;
  return { ...event, event: { ...rest, bytes: toBase64(bytes) } };
}

const str = (x: unknown): x is string => typeof x === 'string';

export function toJobEvent(x: unknown): HubEvent | null {
  if (!isRecord(x)) return null;
  switch (x.type) {
    case 'status':
      return { type: 'status' };
    case 'progress':
      return isRecord(x.progress) ? { type: 'progress', progress: x.progress } : null;
    case 'preview': {
      const p = x.preview;
      return isRecord(p) && str(p.node_id) && str(p.content_type) && str(p.data_base64)
        ? { type: 'preview', preview: { node_id: p.node_id, content_type: p.content_type, data_base64: p.data_base64 } }
        : null;
    }
    case 'output':
      return isRecord(x.asset) && str(x.asset.id) ? (x as HubEvent) : null;
    default:
      return null;
  }
}

export function toAccountEvent(x: unknown): AccountEvent | null {
  if (!isRecord(x) || !str(x.job_id)) return null;
  switch (x.type) {
    case 'engine': {
      const e = x.event;
      if (!isRecord(e) || !str(e.type)) return null;
      if (e.type !== 'preview') return { type: 'engine', job_id: x.job_id, event: e as EngineEvent };
      if (!str(e.bytes) || !str(e.node_id) || (e.format !== 'png' && e.format !== 'jpeg')) return null;
      return { type: 'engine', job_id: x.job_id, event: { type: 'preview', node_id: e.node_id, format: e.format, bytes: fromBase64(e.bytes) } };
    }
    case 'output':
      return isRecord(x.asset) && str(x.asset.id) ? (x as AccountEvent) : null;
    case 'lifecycle':
      return str(x.status) ? { type: 'lifecycle', job_id: x.job_id, status: x.status, error: isRecord(x.error) ? x.error : null } : null;
    default:
      return null;
  }
}
