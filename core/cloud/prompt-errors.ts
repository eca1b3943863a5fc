// Every refusal of POST /prompt in one body that both kinds of client read:
// the reference engine's `{error: {type, message, details, extra_info},
// node_errors}` (a submission result with `error` was not accepted) and the
// cloud contract's `{code, message}`. A refused workflow carries the
// engine's per-node verdict; other refusals (auth, credits, a full queue, a
// bad field) an empty `node_errors` and their code as `error.type`. The
// submission use case's refusals are turned into this shape here.
import type { NodeErrors, ValidationIssue } from '../../engine/types.ts';
import { dict } from '../../lib/dict.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, type ErrorCode, toErrorResponse } from '../errors.ts';
import { respondJson } from '../http/json-response.ts';
import type { WorkflowProblem } from '../jobs/check-workflow.ts';
import { JobIdInUseError, PartnerKeyRequiredError, WorkflowRefusedError } from '../jobs/submit-workflow.ts';
import { classTypeOf } from '../jobs/workflow-check.ts';
import { cloudStatus } from './respond.ts';

export type RefNodeErrors = Record<string, NodeErrors>;

const issue = (type: string, message: string, details = '', extra_info: Record<string, unknown> = {}): ValidationIssue => ({
  type,
  message,
  details,
  extra_info,
});

/** A refusal whose reference body is known (the engine's verdict, a partner node without a key, ...). */
export class PromptRefusal extends ApiError {
  constructor(
    code: ErrorCode,
    readonly error: ValidationIssue,
    readonly nodeErrors: RefNodeErrors = {},
    message = error.details ? `${error.message}: ${error.details}` : error.message,
  ) {
    super(code, message);
  }
}

export const refusal = (code: ErrorCode, type: string, message: string, details = '', extra: Record<string, unknown> = {}) =>
  new PromptRefusal(code, issue(type, message, details, extra), {}, message);

/** A refused workflow in the reference's terms: the engine's own verdict when it has one. */
function workflowRefusal(problem: WorkflowProblem, workflow: Record<string, unknown>): PromptRefusal {
  const v = problem.validation;
  if (v && !v.ok) return new PromptRefusal(problem.code, v.error, v.node_errors, problem.message);
  if (v?.ok && v.node_errors) {
    // Some outputs passed: the reference would run those, a job here runs whole or not at all.
    const error = issue('prompt_outputs_failed_validation', 'Prompt outputs failed validation');
    return new PromptRefusal(problem.code, error, v.node_errors, problem.message);
  }
  const nodeErrors: RefNodeErrors = dict();
  for (const [id, entries] of Object.entries(problem.node_errors)) {
    nodeErrors[id] = {
      errors: entries.map((e) => issue(e.reason, e.message, e.field ?? '', e.field ? { input_name: e.field } : {})),
      dependent_outputs: [],
      class_type: classTypeOf(workflow[id]) ?? '',
    };
  }
  return new PromptRefusal(problem.code, issue(problem.reason, problem.message), nodeErrors, problem.message);
}

/** Partner nodes present but no key to hand them: named one by one. */
function partnerKeyRefusal({ nodes, message }: PartnerKeyRequiredError): PromptRefusal {
  const nodeErrors: RefNodeErrors = dict();
  for (const [id, cls] of nodes) {
    nodeErrors[id] = {
      errors: [issue('api_key_required', 'A partner node needs extra_data.api_key_platform_org', 'api_key_platform_org')],
      dependent_outputs: [],
      class_type: cls,
    };
  }
  return new PromptRefusal('invalid_workflow', issue('api_key_required', message), nodeErrors, message);
}

/** A submission refusal in the reference's terms; anything else as it was thrown. */
function promptRefusalOf(err: unknown): unknown {
  if (err instanceof WorkflowRefusedError) return workflowRefusal(err.problem, err.workflow);
  if (err instanceof PartnerKeyRequiredError) return partnerKeyRefusal(err);
  if (err instanceof JobIdInUseError) return refusal('invalid_request', 'invalid_prompt_id', 'prompt_id: is already in use; send a new UUID', err.id);
  return err;
}

/** Whatever POST /prompt threw, as its response; unknown errors are logged only. */
export function promptErrorResponse(err: unknown, ctx: ServiceContext, request: Request): Response {
  return toErrorResponse(promptRefusalOf(err), ctx.logger, { method: request.method, url: request.url }, promptError);
}

/** The cloud surface's body and status, plus the reference's `error` and `node_errors`. */
function promptError(e: ApiError): Response {
  const body: Record<string, unknown> = { code: e.code, message: e.message };
  if (e instanceof PromptRefusal) {
    body.error = e.error;
    body.node_errors = e.nodeErrors;
  } else {
    if (e.details !== undefined) body.details = e.details;
    body.error = issue(e.code, e.message, '', e.details ?? {});
    body.node_errors = {};
  }
  return respondJson(body, { status: cloudStatus(e), headers: e.headers });
}
