// The shapes the Lambda adapter reads and returns, declared structurally (as
// AWS documents them) so nothing from aws-lambda is needed at run time.
import type { Service } from '../../core/types.ts';

/** Which integration sent the event; each one wants its own result shape. */
export type EventKind =
  /** API Gateway HTTP API payload 2.0 and Lambda Function URLs. */
  | 'v2'
  /** API Gateway REST API (and HTTP API payload 1.0). */
  | 'v1'
  /** Application Load Balancer, target group without multi-value headers. */
  | 'alb'
  /** Application Load Balancer, target group with multi-value headers on. */
  | 'alb-multi';

export type StringMap = Record<string, string | undefined> | null | undefined;
export type StringListMap = Record<string, string[] | undefined> | null | undefined;

export interface HttpEventV2 {
  version: '2.0';
  rawPath: string;
  rawQueryString?: string;
  cookies?: string[];
  headers?: StringMap;
  requestContext: { domainName?: string; http: { method: string; path?: string } };
  body?: string | null;
  isBase64Encoded?: boolean;
}

/** REST API and ALB events: the same request fields, different contexts. */
export interface HttpEventV1 {
  httpMethod: string;
  path: string;
  headers?: StringMap;
  multiValueHeaders?: StringListMap;
  queryStringParameters?: StringMap;
  multiValueQueryStringParameters?: StringListMap;
  requestContext?: { domainName?: string; elb?: { targetGroupArn?: string } };
  body?: string | null;
  isBase64Encoded?: boolean;
}

/** What the adapter uses of the Lambda context object. */
export interface LambdaContextLike {
  getRemainingTimeInMillis?(): number;
  awsRequestId?: string;
}

export interface ResultV2 {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
  body: string;
  isBase64Encoded: boolean;
}

export interface ResultV1 {
  statusCode: number;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded: boolean;
}

export interface ResultAlb extends ResultV1 {
  /** e.g. "200 OK"; the load balancer sends it as the reason phrase. */
  statusDescription: string;
}

export type LambdaResult = ResultV2 | ResultV1 | ResultAlb;

/** What the adapter needs of a Service: `fetch`, `refuse` for its own answers, and `idle` when it has one. */
export type FetchService = Pick<Service, 'fetch' | 'refuse'> & Partial<Pick<Service, 'idle'>>;

/** A result without its body: what the streaming handler sends as the metadata prelude. */
export type ResultHead =
  | Omit<ResultV2, 'body' | 'isBase64Encoded'>
  | Omit<ResultV1, 'body' | 'isBase64Encoded'>
  | Omit<ResultAlb, 'body' | 'isBase64Encoded'>;
