// Web Response -> the result object each integration expects back: payload
// 2.0 gets cookies in `cookies`; REST API gets them in `multiValueHeaders`
// (which it merges over `headers`); an ALB gets exactly one of `headers` or
// `multiValueHeaders`, whichever its target group is set up for.
import { STATUS_CODES } from 'node:http';
import type { Logger } from '../../core/types.ts';
import { encodeResultBody } from './body.ts';
import type { EventKind, LambdaResult, ResultHead } from './types.ts';

// Framing belongs to the integration, which re-frames the body it is given.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'set-cookie']);

export interface Head {
  statusCode: number;
  /** Every field but Set-Cookie, repeated fields joined with ", " (as Headers does). */
  headers: Record<string, string>;
  cookies: string[];
}

export function headOf(response: Response): Head {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!HOP_BY_HOP.has(name)) headers[name] = value;
  return { statusCode: response.status, headers, cookies: response.headers.getSetCookie() };
}

const statusDescription = (status: number) => `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;

/** The result fields that carry status and headers, for this kind of event (null: unknown shape). */
export function resultHead(head: Head, kind: EventKind | null, logger?: Logger): ResultHead {
  const { statusCode, headers, cookies } = head;
  switch (kind) {
    case 'v2':
      return cookies.length > 0 ? { statusCode, headers, cookies } : { statusCode, headers };
    case 'v1':
      return cookies.length > 0 ? { statusCode, headers, multiValueHeaders: { 'set-cookie': cookies } } : { statusCode, headers };
    case 'alb-multi': {
      const multiValueHeaders: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(headers)) multiValueHeaders[name] = [value];
      if (cookies.length > 0) multiValueHeaders['set-cookie'] = cookies;
      return { statusCode, statusDescription: statusDescription(statusCode), multiValueHeaders };
    }
    case 'alb': {
      // One value per name is all this target group can return; cookies cannot be joined safely.
      if (cookies.length > 1)
        logger?.warn('lambda adapter: only the first Set-Cookie is sent; turn on multi-value headers on the ALB target group', {
          dropped: cookies.length - 1,
        });
      const single = cookies.length > 0 ? { ...headers, 'set-cookie': cookies[0] } : headers;
      return { statusCode, statusDescription: statusDescription(statusCode), headers: single };
    }
    default:
      // The fields every integration accepts.
      return { statusCode, headers };
  }
}

export interface ResultOptions {
  /** Largest encoded body. */
  maxBodyBytes: number;
  /** The request was HEAD: the result has headers only. */
  head?: boolean;
  logger?: Logger;
}

/** The whole result for a buffered integration; ResultTooLargeError when the body cannot fit. */
export async function responseToResult(response: Response, kind: EventKind | null, opts: ResultOptions): Promise<LambdaResult> {
  const { body, isBase64Encoded } = await encodeResultBody(response, opts.maxBodyBytes, opts.head);
  return { ...resultHead(headOf(response), kind, opts.logger), body, isBase64Encoded } as LambdaResult;
}
