// Which nodes run beside the service rather than in a worker thread: partner
// nodes. They wait on a provider and charge the account (the service's
// objects, which do not cross threads) and compute next to nothing.
import type { LocalNode } from '../define-node.ts';

export const runsOnRequestThread = (node: LocalNode): boolean => node.definition.api_node === true;
