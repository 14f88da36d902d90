/**
 * Checks that a parsed YAML / JSON value is something a Kubernetes object can be before it is
 * handed to the simulation: no cycles (a YAML alias inside its own anchor, `a: &a [*a]`, which
 * go-yaml refuses with "anchor 'a' value contains itself") and no absurd nesting (Go's JSON
 * decoder stops at depth 10000; podsim's actors copy objects recursively, and a few thousand
 * levels overflow the stack of the actor or of the engine's message encoder). Iterative, so the
 * check itself survives any depth.
 */

/** Deepest nesting of objects / lists accepted (real Kubernetes objects stay below ~40). */
export const MAX_OBJECT_DEPTH = 512;

/** A problem with the value's shape: where (`.spec.containers[0]`) and what. */
export interface ShapeProblem {
  readonly path: string;
  readonly message: string;
}

/** undefined when `root` is a finite tree (or DAG) at most {@link MAX_OBJECT_DEPTH} deep. */
export function jsonShapeProblem(root: unknown, maxDepth = MAX_OBJECT_DEPTH): ShapeProblem | undefined {
  if (root === null || typeof root !== 'object') return undefined;
  // Depth-first with explicit exit markers, so "on the current path" is exact (a DAG is fine).
  type Frame = { readonly v: object; readonly path: string; readonly depth: number; exit: boolean };
  const onPath = new Set<object>();
  const stack: Frame[] = [{ v: root, path: '', depth: 1, exit: false }];
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    if (f.exit) {
      onPath.delete(f.v);
      stack.pop();
      continue;
    }
    f.exit = true;
    if (onPath.has(f.v)) return { path: f.path || '.', message: 'an alias refers to the node that contains it; a Kubernetes object cannot contain itself' };
    if (f.depth > maxDepth) return { path: `${f.path.slice(0, 60)}…`, message: `nested deeper than ${maxDepth} levels` };
    onPath.add(f.v);
    const children: Array<[string, unknown]> = Array.isArray(f.v)
      ? f.v.map((x, i) => [`${f.path}[${i}]`, x])
      : Object.entries(f.v).map(([k, x]) => [`${f.path}.${k}`, x]);
    for (let i = children.length - 1; i >= 0; i--) {
      const [p, x] = children[i];
      if (x !== null && typeof x === 'object') stack.push({ v: x, path: p, depth: f.depth + 1, exit: false });
    }
  }
  return undefined;
}
