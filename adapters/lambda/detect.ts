// Which integration an event comes from, told by the fields AWS documents for
// each: payload 2.0 has `version: "2.0"` and `requestContext.http`; an ALB
// event has `requestContext.elb` (and `multiValueHeaders` when the target
// group has multi-value headers on); a REST API event has `httpMethod`.
import { isRecord } from '../../lib/is-record.ts';
import type { EventKind } from './types.ts';

/** The event's kind, or null when it is not an HTTP event of a known shape. */
export function detectEvent(event: unknown): EventKind | null {
  if (!isRecord(event)) return null;
  const context = event.requestContext;
  if (event.version === '2.0' && isRecord(context) && isRecord(context.http)) return 'v2';
  if (isRecord(context) && isRecord(context.elb)) return isRecord(event.multiValueHeaders) ? 'alb-multi' : 'alb';
  if ('httpMethod' in event) return 'v1';
  return null;
}
