// Public surface of the AWS Lambda adapter.
export { createLambdaHandler, DEFAULT_MAX_RESULT_BODY_BYTES, type LambdaHandler, type LambdaHandlerOptions } from './handler.ts';
export {
  createLambdaStreamHandler,
  type LambdaResponseStream,
  type LambdaStreamHandler,
  type LambdaStreamHandlerOptions,
  type LambdaStreamingRuntime,
} from './stream-handler.ts';
export { detectEvent } from './detect.ts';
export { eventToRequest, type EventRequest, type EventRequestOptions } from './request.ts';
export type { LambdaOptions } from './invoke.ts';
export { responseToResult } from './result.ts';
export { MalformedEventError } from './errors.ts';
export type * from './types.ts';
