// Public surface of the AWS Lambda adapter.

export { detectEvent } from './detect.ts';
export { MalformedEventError } from './errors.ts';
export { createLambdaHandler, DEFAULT_MAX_RESULT_BODY_BYTES, type LambdaHandler, type LambdaHandlerOptions } from './handler.ts';
export type { LambdaOptions } from './invoke.ts';
export { type EventRequest, type EventRequestOptions, eventToRequest } from './request.ts';
export { responseToResult } from './result.ts';
export {
  createLambdaStreamHandler,
  type LambdaResponseStream,
  type LambdaStreamHandler,
  type LambdaStreamHandlerOptions,
  type LambdaStreamingRuntime,
} from './stream-handler.ts';
export type * from './types.ts';
