// How the v2 surface answers whatever its handlers threw: the envelope of
// core/errors.ts, once the submission use case's refusals (which belong to
// no surface) are turned into v2 codes and details.

import { dict } from '../../lib/dict.ts';
import { ApiError, invalid, toErrorResponse } from '../errors.ts';
import type { ErrorRenderer } from '../http/surface.ts';
import type { WorkflowProblem } from '../jobs/check-workflow.ts';
import { JobIdInUseError, PartnerKeyRequiredError, WorkflowRefusedError } from '../jobs/submit-workflow.ts';
import type { V2NodeErrors } from '../jobs/workflow-check.ts';

/** A refused workflow: an editor export says only so, a missing asset has no reference `reason`. */
function problemError(p: WorkflowProblem): ApiError {
  switch (p.code) {
    case 'workflow_format_ui':
      return new ApiError(p.code, p.message);
    case 'missing_asset':
      return new ApiError(p.code, p.message, { node_errors: p.node_errors });
    default:
      return new ApiError(p.code, p.message, { node_errors: p.node_errors, reason: p.reason });
  }
}

/** Partner nodes sent without the key: 422 invalid_workflow naming each node. */
function partnerKeyError(err: PartnerKeyRequiredError): ApiError {
  const node_errors: V2NodeErrors = dict();
  for (const [id] of err.nodes)
    node_errors[id] = [
      { field: 'extra_data.api_key_platform_org', reason: 'api_key_required', message: 'A partner node needs extra_data.api_key_platform_org' },
    ];
  return new ApiError('invalid_workflow', err.message, { node_errors, reason: 'api_key_required' });
}

/** A submission refusal in v2 terms; anything else as it was thrown. */
export function v2Error(err: unknown): unknown {
  if (err instanceof WorkflowRefusedError) return problemError(err.problem);
  if (err instanceof PartnerKeyRequiredError) return partnerKeyError(err);
  // v2 lets the service choose job ids, so only a future client-chosen id would get here.
  if (err instanceof JobIdInUseError) return invalid('id: is already in use; send a new UUID', 'id', 'already in use');
  return err;
}

export const v2ErrorResponse: ErrorRenderer = (err, logger, context) => toErrorResponse(v2Error(err), logger, context);
