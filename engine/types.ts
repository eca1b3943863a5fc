// The engine interface the core schedules jobs onto. An engine knows its node
// definitions (to validate submissions and to answer object_info), says
// whether it is ready, and executes one job at a time per call, reporting
// through the context it is given. Implementations: engine/local (in process)
// and engine/comfyui (a pool of engine servers driven as workers).
import type { Providers } from '../providers/types.ts';

/** `[TYPE, options]` as the reference's object_info writes an input; TYPE may be a list (a combo). */
export type InputSpec = [type: string | readonly string[], options?: Record<string, unknown>];

/** One node class in the reference's object_info format. */
export interface NodeDefinition {
  name: string;
  display_name: string;
  description: string;
  category: string;
  python_module: string;
  input: {
    required: Record<string, InputSpec>;
    optional?: Record<string, InputSpec>;
    hidden?: Record<string, InputSpec>;
  };
  input_order: { required: string[]; optional?: string[]; hidden?: string[] };
  output: string[];
  output_name: string[];
  output_is_list: boolean[];
  output_node: boolean;
  /** A partner node: it calls an external service and needs the platform key. */
  api_node?: boolean;
  deprecated?: boolean;
  experimental?: boolean;
}

/** An API-format workflow: node id -> node. An input value `[id, index]` is a link. */
export type Workflow = Record<string, { class_type: string; inputs: Record<string, unknown>; _meta?: { title?: string } }>;

/** One validation problem, in the reference's shape. */
export interface ValidationIssue {
  type: string;
  message: string;
  details: string;
  extra_info: Record<string, unknown>;
}

export interface NodeErrors {
  errors: ValidationIssue[];
  dependent_outputs: string[];
  class_type: string;
}

export type ValidationResult =
  /** `node_errors` on the ok side: outputs that failed while others passed (the reference runs the rest). */
  | { ok: true; outputs: string[]; node_errors?: Record<string, NodeErrors> }
  | { ok: false; error: ValidationIssue; node_errors: Record<string, NodeErrors> };

export type OutputType = 'image' | 'video' | 'audio' | 'text' | 'file' | 'latent';

/** A committed output: an asset of the job's account, with the node that made it. */
export interface OutputAsset {
  id: string;
  node_id: string;
  name: string;
  type: OutputType;
  content_type: string;
  size_bytes: number;
  hash: string | null;
}

export type EngineEvent =
  | { type: 'execution_start' }
  | { type: 'cached'; node_ids: string[] }
  | { type: 'executing'; node_id: string; class_type: string }
  | { type: 'progress'; node_id: string; value: number; max: number }
  | { type: 'executed'; node_id: string; output: Record<string, unknown> }
  | { type: 'preview'; node_id: string; format: 'png' | 'jpeg'; bytes: Uint8Array }
  | { type: 'text'; node_id: string; text: string }
  /** A user-facing message about the run (the reference's `notification`), e.g. that it moved to another worker. */
  | { type: 'notification'; value: string };

/**
 * What partner nodes (api_node) reach of the service that runs the job: the
 * job's account, its platform key, credits and the generation providers.
 */
export interface PartnerServices {
  readonly account_id: string;
  /** extra_data.api_key_platform_org of the submission; undefined when none was sent. */
  readonly api_key: string | undefined;
  /** Takes credits from the job's account; false when it has not enough (nothing is taken). */
  charge(amount: number, what: string): Promise<boolean>;
  /** The service's generation providers, the ones its /proxy endpoints use. */
  readonly providers: Providers;
}

export interface ExecutionContext {
  /** Aborted when the job is canceled; engines stop between nodes and between steps. */
  signal: AbortSignal;
  /** Given by the service to in-process engines; absent elsewhere (partner nodes then fail). */
  partner?: PartnerServices;
  emit(event: EngineEvent): void;
  /** Streams bytes into the blob store (deduplicated like uploads) as an asset of the job. */
  commitOutput(output: NewOutput & { node_id: string }): Promise<OutputAsset>;
  /** An input asset of the job's account, by asset id or by its file name; null when absent. */
  readAsset(ref: { id?: string; name?: string }): Promise<InputAsset | null>;
}

/** Bytes a node produced, to become an asset of the job's account. */
export interface NewOutput {
  name: string;
  type: OutputType;
  content_type: string;
  body: Uint8Array | AsyncIterable<Uint8Array>;
  /**
   * A temporary file (the reference's `type: "temp"`, e.g. PreviewImage):
   * stored for a short while so clients can fetch it by name, but not one
   * of the job's outputs.
   */
  temporary?: boolean;
}

/** An input asset of the job's account as an engine reads it: its bytes as they stream. */
export interface InputAsset {
  id: string;
  content_type: string;
  size_bytes: number;
  body: ReadableStream<Uint8Array>;
}

export interface EngineJob {
  id: string;
  account_id: string;
  workflow: Workflow;
  /** Forwarded to partner nodes; never persisted with outputs. */
  extra_data?: Record<string, unknown>;
  /**
   * How many times the service has started this job, this run included (1:
   * the first). Above 1, an earlier run was cut short (a restart, a crash)
   * and an engine server may still hold it: follow that run, do not start a
   * second one.
   */
  attempt?: number;
}

/**
 * Why a running job's signal was aborted: a cancel (stop the run), or the
 * service shutting down. At a shutdown an engine whose run goes on without
 * the service (an engine server's prompt) leaves it going: the next start
 * runs the job again (EngineJob.attempt > 1) and finds it there.
 */
export class JobAbort extends Error {
  override name = 'AbortError';
  constructor(readonly kind: 'cancel' | 'shutdown') {
    super(kind === 'cancel' ? 'The job was canceled.' : 'The service is shutting down.');
  }
}

/** How a job failed, in the terms of the reference's execution_error. */
export class ExecutionError extends Error {
  override name = 'ExecutionError';
  constructor(
    message: string,
    readonly exception_type: string,
    readonly node_id: string | null = null,
    readonly class_type: string | null = null,
    readonly traceback: string | null = null,
  ) {
    super(message);
  }
}

/**
 * The engine cannot answer yet (no worker has come up, so its node classes
 * are unknown). Callers see 429 `deployment_not_ready` with a Retry-After.
 */
export class EngineNotReadyError extends Error {
  override name = 'EngineNotReadyError';
}

export type EngineReadiness =
  | { state: 'ready' }
  | {
      state: 'starting' | 'unavailable';
      detail: string;
      /**
       * Jobs submitted now are taken and wait until it is ready (a pool whose
       * servers warm up); absent, a starting engine cannot take any yet (its
       * deployment is not ready).
       */
      queuesJobs?: boolean;
    };

/** One engine server of a pool as the pool sees it now (for readiness, metrics and the dashboard). */
export interface EngineServerStatus {
  url: string;
  healthy: boolean;
  /** Prompts of this service it is running or holds queued. */
  busy: number;
  /** Prompts it may hold at once for this service. */
  slots: number;
  /** 'draining': it finishes what it runs and takes no new job (an engine whose servers come and go). */
  state?: 'active' | 'draining';
  /** Running its warm-up workflow: it takes no job yet. */
  warming?: boolean;
  /** Model files it is taken to hold in memory (an engine that routes by model). */
  models?: string[];
}

export interface Engine {
  readonly name: string;
  readiness(): EngineReadiness;
  /** The engine servers behind it, for an engine that runs jobs on some; absent for an in-process engine. */
  servers?(): EngineServerStatus[];
  /**
   * An engine on a pool whose servers come and go at run time has these three
   * (the operator's /ops/servers drives them without knowing the engine):
   * join a server (an http(s) base URL; a known one is kept, a draining one
   * becomes active again), drain one (it takes no new job; settles once none
   * runs there), remove one (a job running there runs again elsewhere).
   */
  addServer?(url: string): void;
  drainServer?(url: string): Promise<void>;
  removeServer?(url: string): Promise<void>;
  nodeDefinitions(): Promise<Record<string, NodeDefinition>>;
  validate(workflow: Workflow): Promise<ValidationResult>;
  /** Resolves when the job finished; rejects with ExecutionError (or an AbortError when canceled). */
  execute(job: EngineJob, ctx: ExecutionContext): Promise<void>;
  close(): Promise<void>;
}
