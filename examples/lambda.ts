// The API as an AWS Lambda function. Bundle this file (better-sqlite3 stays a
// dependency with its native module) and set the function's handler to
// `lambda.handler` (API Gateway HTTP or REST API, an ALB target group, a
// function URL in BUFFERED mode) or `lambda.streamHandler` (a function URL in
// RESPONSE_STREAM mode: job events as live SSE, downloads past 6 MB).
//
// Lambda has no long-running process: the environment is frozen between
// invocations, so nothing can execute a job in the background. This instance
// serves the API only (`runJobs: false`): a submitted job is stored as
// queued, and a long-running worker that opens the same storage
// (examples/lambda-worker.ts) claims and runs it; its progress, outputs and
// end reach GET /api/v2/jobs/{id} and its event stream through that storage.
import { createLambdaHandler, createLambdaStreamHandler } from '../adapters/lambda/index.ts';
import { createService } from '../index.ts';
import { blobsInBucket, openStorage } from './lambda-storage.ts';

// Created once per execution environment, during its init phase.
export const service = await createService({
  storage: await openStorage(),
  token: process.env.GRAPHRUN_TOKEN,
  runJobs: false,
  // Timers only tick while an invocation runs: the worker sweeps expired assets and jobs.
  sweepIntervalMs: 0,
  // Downloads go straight from the bucket (a presigned URL for five minutes), not through the function.
  downloadRedirectSeconds: blobsInBucket ? 300 : 0,
});

export const handler = createLambdaHandler(service);
export const streamHandler = createLambdaStreamHandler(service);
