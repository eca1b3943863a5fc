// The Job object of the v2 contract and its parts as valibot schemas: the
// OpenAPI document is generated from them and the view's types come from
// them, so what the service documents and what it returns are one thing.
import * as v from 'valibot';
import { HASH_PATTERN } from '../hash.ts';
import { JOB_STATUSES } from './state-machine.ts';

const timestamp = v.pipe(v.string(), v.isoTimestamp());
const nullableInt = v.nullable(v.pipe(v.number(), v.integer()));

export const ProgressSchema = v.object({
  value: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  nodes_done: v.pipe(v.number(), v.integer()),
  nodes_total: v.pipe(v.number(), v.integer()),
  current_node: v.nullable(v.string()),
  current_node_class: v.nullable(v.string()),
  step: nullableInt,
  steps: nullableInt,
  message: v.nullable(v.string()),
});

export const OUTPUT_TYPES = ['image', 'video', 'audio', 'text', 'file', 'latent'] as const;

export const OutputSchema = v.object({
  node_id: v.string(),
  name: v.string(),
  type: v.picklist(OUTPUT_TYPES),
  content_type: v.string(),
  size_bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  id: v.pipe(v.string(), v.uuid()),
  hash: v.nullable(v.pipe(v.string(), v.regex(HASH_PATTERN))),
  url: v.pipe(v.string(), v.url()),
  url_expires_at: timestamp,
  job_id: v.nullable(v.string()),
});

export const JobErrorSchema = v.object({
  /** node_execution_error, execution_error, invalid_workflow, job_interrupted or internal_error. */
  code: v.string(),
  message: v.string(),
  /** The reference's execution_error kind (ImageDownloadError, ValidationError, ...). */
  exception_type: v.nullable(v.string()),
  node_id: v.nullable(v.string()),
  class_type: v.nullable(v.string()),
  traceback: v.nullable(v.string()),
});

export const JobSchema = v.object({
  id: v.pipe(v.string(), v.uuid()),
  status: v.picklist(JOB_STATUSES),
  created_at: timestamp,
  started_at: v.nullable(timestamp),
  completed_at: v.nullable(timestamp),
  expires_at: timestamp,
  /** Queued jobs of all accounts ahead of this one (0 = next); null unless queued. */
  queue_position: nullableInt,
  progress: v.nullable(ProgressSchema),
  outputs: v.array(OutputSchema),
  error: v.nullable(JobErrorSchema),
  metrics: v.object({ queue_ms: nullableInt, execution_ms: nullableInt }),
  // Additions to the contract's Job (v2 grows additively): what the submission
  // asked for, and what the engine did with the job's nodes.
  priority: v.pipe(
    v.number(),
    v.integer(),
    v.description("As submitted (default 0): higher starts first within the account's queue, FIFO within a priority."),
  ),
  metadata: v.pipe(
    v.nullable(v.record(v.string(), v.unknown())),
    v.description('The JSON object submitted as metadata, as given; null when none was.'),
  ),
  outputs_reused: v.pipe(
    v.boolean(),
    v.description(
      "True when the engine answered at least one of the job's nodes from results of an earlier run (its cache) instead of computing it; false until then, and for a job that computed every node. Outputs are still the job's own assets.",
    ),
  ),
  urls: v.object({ self: v.string(), events: v.string(), cancel: v.string() }),
});

export const JobWorkflowSchema = v.object({
  workflow: v.record(v.string(), v.unknown()),
  format: v.picklist(['api', 'save']),
});

export type JobView = v.InferOutput<typeof JobSchema>;
export type OutputView = v.InferOutput<typeof OutputSchema>;
