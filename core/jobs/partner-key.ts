// Partner nodes (node classes that call external services with the caller's
// own key): the key a submission brings under either of its names, and which
// nodes of a workflow need one.
import type { ServiceContext } from '../context.ts';
import { invalid } from '../errors.ts';
import { classTypeOf } from './workflow-check.ts';

/** The partner-node key as a submission's extra_data carries it: the alias is what the public client sends. */
export interface PartnerKeyFields {
  api_key_platform_org?: string;
  api_key_comfy_org?: string;
}

/**
 * The partner-node key under its one name, as the runner hands it to the
 * engine; undefined without one.
 */
export function partnerKey(ctx: ServiceContext, extra: PartnerKeyFields | undefined): Record<string, unknown> | undefined {
  if (!extra) return undefined;
  const { api_key_platform_org: key, api_key_comfy_org: alias } = extra;
  if (key !== undefined && alias !== undefined && key !== alias) {
    throw invalid('extra_data: api_key_platform_org and api_key_comfy_org differ; send one', 'extra_data', 'conflicting keys');
  }
  const value = key ?? alias;
  if (value === undefined) return undefined;
  if (!ctx.config.runJobs) {
    // It is never stored, so only the instance that runs the job could hand it on.
    throw invalid(
      'extra_data: this instance only queues jobs (another one runs them), so it cannot forward a partner-node key',
      'extra_data',
      'not forwarded by this instance',
    );
  }
  return { api_key_platform_org: value };
}

/** The workflow's partner nodes, as [id, class_type]. */
export async function partnerNodes(ctx: ServiceContext, workflow: Record<string, unknown>): Promise<Array<[string, string]>> {
  const defs = await ctx.engine.nodeDefinitions();
  const found: Array<[string, string]> = [];
  for (const [id, node] of Object.entries(workflow)) {
    const cls = classTypeOf(node);
    if (cls !== undefined && Object.hasOwn(defs, cls) && defs[cls].api_node === true) found.push([id, cls]);
  }
  return found;
}
