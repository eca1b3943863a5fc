// How deeply a submitted workflow may nest. Both submission surfaces check it
// while parsing their body, each naming its own field, before anything walks
// the workflow recursively.

/** Deeper than any real graph; deeper values would only overflow the stack of whoever serialises them. */
export const MAX_WORKFLOW_DEPTH = 64;

/** The nesting depth of a JSON value, walked without recursion, stopping once past `limit`. */
export function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
