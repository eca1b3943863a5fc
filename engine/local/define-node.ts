// How a node of the local engine is declared: typed inputs and outputs in the
// reference's terms (so object_info and validation come from one place), an
// output-node flag, a run function, and what it will allocate (for the job's
// memory budget). Web APIs only, like the core.
import type { ExecutionContext, InputSpec, NewOutput, NodeDefinition, OutputAsset, PartnerServices } from '../types.ts';

/** What a running node may do besides computing its outputs. */
export interface NodeRunContext {
  readonly node_id: string;
  readonly signal: AbortSignal;
  /** Step progress within the node; also the point where a cancel is honoured. */
  progress(value: number, max: number): void;
  preview(bytes: Uint8Array, format: 'png' | 'jpeg'): void;
  text(text: string): void;
  /** Commits as an output of this node. */
  commitOutput(output: NewOutput): Promise<OutputAsset>;
  readAsset: ExecutionContext['readAsset'];
  /** Operator settings the node may consult (e.g. allowPrivateUrls). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** For partner nodes: the account, credits and providers of the service running the job. */
  readonly partner?: PartnerServices;
  /**
   * Bytes the node may allocate beyond its memory estimate: what is left of
   * the job's memory budget. A node whose sizes are known only as it runs
   * (LoadImage decoding a file) checks them against this before allocating.
   * Absent: no bound.
   */
  readonly maxBytes?: number;
}

/** What a node will allocate, worked out from its inputs before it runs (memory-budget.ts, memory-check.ts). */
export interface MemoryEstimate {
  /** Bytes of the outputs it makes; they stay alive until the job ends. */
  bytes: number;
  /** Bytes it needs besides, only while it runs (working buffers). */
  scratch?: number;
  /** The input that sets the size, named when the estimate does not fit. */
  input?: string;
  /**
   * Its outputs as far as they are known ahead (the shape of an IMAGE, a
   * primitive's value), for the nodes downstream; undefined where not known.
   */
  outputs?: unknown[];
}

/** What run() returns: one value per declared output, and the "ui" dict history shows. */
export interface NodeResult {
  outputs: unknown[];
  ui?: Record<string, unknown>;
}

export interface OutputSpec {
  type: string;
  name?: string;
  is_list?: boolean;
}

export interface NodeSpec {
  name: string;
  display_name?: string;
  description?: string;
  category: string;
  required?: Record<string, InputSpec>;
  optional?: Record<string, InputSpec>;
  outputs?: OutputSpec[];
  output_node?: boolean;
  /** A partner node: it calls an external service and needs the caller's platform key (extra_data). */
  api_node?: boolean;
  /**
   * False for nodes whose result depends on more than their inputs (a URL's
   * current content, randomness): they always run and are never served from cache.
   */
  cacheable?: boolean;
  run(inputs: Record<string, unknown>, ctx: NodeRunContext): Promise<NodeResult> | NodeResult;
  /**
   * What run() will allocate, from the same inputs: at validation, constants
   * and the upstream estimates' `outputs` (undefined where not known ahead);
   * at run time the real values. An input not known may count as its
   * smallest (the estimate is then a lower bound, so a refusal is certain);
   * null when nothing can be said. Absent: the node allocates little, or
   * bounds itself (NodeRunContext.maxBytes).
   */
  memory?(inputs: Record<string, unknown>): MemoryEstimate | null;
}

export interface LocalNode {
  definition: NodeDefinition;
  cacheable: boolean;
  run: NodeSpec['run'];
  memory?: NodeSpec['memory'];
}

export function defineNode(spec: NodeSpec): LocalNode {
  const required = spec.required ?? {};
  const optional = spec.optional ?? {};
  const outputs = spec.outputs ?? [];
  return {
    definition: {
      name: spec.name,
      display_name: spec.display_name ?? spec.name,
      description: spec.description ?? '',
      category: spec.category,
      python_module: 'graphrun.local',
      input: Object.keys(optional).length > 0 ? { required, optional } : { required },
      input_order:
        Object.keys(optional).length > 0 ? { required: Object.keys(required), optional: Object.keys(optional) } : { required: Object.keys(required) },
      output: outputs.map((o) => o.type),
      output_name: outputs.map((o) => o.name ?? o.type),
      output_is_list: outputs.map((o) => o.is_list ?? false),
      output_node: spec.output_node ?? false,
      ...(spec.api_node ? { api_node: true } : {}),
    },
    cacheable: spec.cacheable ?? true,
    run: spec.run,
    ...(spec.memory ? { memory: spec.memory } : {}),
  };
}
