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

/** A problem with the value's shape: where (`.spec.containers[0]`, and as path segments) and what. */
export interface ShapeProblem {
  readonly path: string;
  readonly segments: ReadonlyArray<string | number>;
  readonly message: string;
}

interface Frame {
  readonly v: object;
  readonly parent: Frame | undefined;
  readonly key: string | number;
  readonly depth: number;
  exit: boolean;
}

function segmentsOf(f: Frame): Array<string | number> {
  const out: Array<string | number> = [];
  for (let x: Frame | undefined = f; x?.parent; x = x.parent) out.push(x.key);
  return out.reverse();
}

function pathText(segs: ReadonlyArray<string | number>): string {
  const text = segs.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('') || '.';
  return text.length > 80 ? `${text.slice(0, 60)}…` : text;
}

/** undefined when `root` is a finite tree (or DAG) at most {@link MAX_OBJECT_DEPTH} deep, without a `__proto__` key. */
export function jsonShapeProblem(root: unknown, maxDepth = MAX_OBJECT_DEPTH): ShapeProblem | undefined {
  if (root === null || typeof root !== 'object') return undefined;
  // Depth-first with explicit exit markers, so "on the current path" is exact (a DAG is fine).
  const onPath = new Set<object>();
  const stack: Frame[] = [{ v: root, parent: undefined, key: '', depth: 1, exit: false }];
  const problem = (f: Frame, message: string): ShapeProblem => {
    const segments = segmentsOf(f);
    return { path: pathText(segments), segments, message };
  };
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    if (f.exit) {
      onPath.delete(f.v);
      stack.pop();
      continue;
    }
    f.exit = true;
    if (onPath.has(f.v)) return problem(f, 'an alias refers to the node that contains it (a value cannot contain itself)');
    if (f.depth > maxDepth) return problem(f, `nested deeper than ${maxDepth} levels`);
    onPath.add(f.v);
    const keys: Array<string | number> = Array.isArray(f.v) ? f.v.map((_, i) => i) : Object.keys(f.v);
    if (!Array.isArray(f.v) && Object.prototype.hasOwnProperty.call(f.v, '__proto__')) {
      // JSON.parse and the yaml library keep it as an own key, but copying (spread, deep clone)
      // drops it and the engine's codec renames it: one thread and several would disagree.
      // Kubernetes refuses it too wherever a key is validated (labels, annotations: 422).
      return problem({ v: f.v, parent: f, key: '__proto__', depth: f.depth + 1, exit: false }, 'a key named "__proto__" is not accepted (it is not a valid label, annotation or field name)');
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const x = (f.v as Record<string | number, unknown>)[keys[i]];
      if (x !== null && typeof x === 'object') stack.push({ v: x, parent: f, key: keys[i], depth: f.depth + 1, exit: false });
    }
  }
  return undefined;
}
