/**
 * `equality.Semantic.DeepEqual` (apimachinery v0.22.8 `pkg/api/equality/semantic.go`) for the
 * JSON-shaped values objects travel as: structural, key order ignored, and a property whose
 * value is `undefined` equals an absent one (as Go's zero-value `omitempty` fields would). Used by
 * the kubelet (pod config merge, status manager) and the controllers (scheduling queue, status
 * updates). Allocation-free: it runs on every status sync.
 */

/** Structural equality of JSON-like values; `undefined` properties count as absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  return objectsEqualExcept(a as Record<string, unknown>, b as Record<string, unknown>, undefined);
}

/**
 * {@link deepEqual} of two plain objects, ignoring the properties `skip` (and `skip2`) on both
 * sides: what `deepEqual({ ...a, [skip]: b[skip] }, b)` answers, without the copy.
 */
export function objectsEqualExcept(ao: Record<string, unknown>, bo: Record<string, unknown>, skip: string | undefined, skip2?: string): boolean {
  let na = 0;
  for (const k in ao) {
    if (ao[k] === undefined || k === skip || k === skip2) continue;
    na++;
    if (!deepEqual(ao[k], bo[k])) return false;
  }
  let nb = 0;
  for (const k in bo) if (bo[k] !== undefined && k !== skip && k !== skip2) nb++;
  return na === nb;
}
