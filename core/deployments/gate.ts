// What a deployment's condition refuses, before any surface handler runs.
// Stopped: every request of the API surfaces (422 deployment_stopped), since
// nothing the deployment serves may be relied on until an operator starts it
// again. Not ready: submissions (a job, a prompt, a generation; 429
// deployment_not_ready with Retry-After), after the engine had its moment to
// come up: a worker pool waits a few seconds for a server to answer with its
// node definitions, so a server that joins just before a job does not turn
// it away. Uploads, polls, listings, cancels and downloads go on. The
// operator's surface (probes, metrics, /ops/*) is never refused: it is how
// the deployment is looked at and brought back.
import type { Engine } from '../../engine/types.ts';
import { ApiError, knownError, NOT_READY_RETRY_AFTER } from '../errors.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import type { DeploymentCondition } from './condition.ts';

/** The path as routes match it: they take trailing slashes (/api/v2/jobs/ is /api/v2/jobs). */
const routed = (path: string) => path.replace(/\/+$/, '');

/** The cloud surface's submission, bare or under /api. */
export const isPromptPath = (path: string) => {
  const p = routed(path);
  return p === '/prompt' || p === '/api/prompt';
};

/** The requests that give a deployment work: a job, a prompt, a generation. */
function isSubmission(surface: SurfaceDefinition['name'], method: string, path: string): boolean {
  if (method !== 'POST') return false;
  switch (surface) {
    case 'v2':
      return routed(path) === '/api/v2/jobs';
    case 'cloud':
      return isPromptPath(path);
    case 'music':
    case 'video':
      return true;
    default:
      return false;
  }
}

/** What every request of a stopped deployment gets (its WebSocket upgrades too). */
export const stoppedRefusal = (deployment: DeploymentCondition) =>
  new ApiError('deployment_stopped', `The deployment "${deployment.id}" is stopped; an operator must start it again.`);

/** `why` is the engine's own public wording, when it refused; the readiness detail may name hosts and is for operators only. */
const notReady = (deployment: DeploymentCondition, why = 'its engine is starting') =>
  new ApiError('deployment_not_ready', `The deployment "${deployment.id}" is not ready yet (${why}); retry after a few seconds.`, undefined, {
    'Retry-After': NOT_READY_RETRY_AFTER,
  });

/** A submission to a deployment that is not ready: its engine's definitions are waited for (as long as the engine waits), then it is asked again. */
async function afterEngineWait(deployment: DeploymentCondition, engine: Engine): Promise<ApiError | null> {
  try {
    await engine.nodeDefinitions();
  } catch (err) {
    // Not ready after its wait: the engine's own words. Anything else is the handler's to meet.
    const known = knownError(err);
    if (known?.code === 'deployment_not_ready') return notReady(deployment, known.message);
  }
  return deployment.current().state === 'not_ready' ? notReady(deployment) : null;
}

/**
 * The refusal this request gets from the deployment's condition, or null
 * when it goes through; a promise only for a submission while the
 * deployment is not ready (every other request is decided at once).
 */
export function deploymentRefusal(
  deployment: DeploymentCondition,
  engine: Engine,
  surface: SurfaceDefinition['name'],
  method: string,
  path: string,
): ApiError | null | Promise<ApiError | null> {
  if (surface === 'ops') return null;
  if (deployment.stopped()) return stoppedRefusal(deployment);
  if (!isSubmission(surface, method, path) || deployment.current().state !== 'not_ready') return null;
  return afterEngineWait(deployment, engine);
}
