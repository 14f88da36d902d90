/**
 * Plain-object helpers for API objects in their JSON wire shape: deep copy (objects arriving in
 * messages are shared and immutable; storage objects are replaced, never mutated) and the
 * semantic equality GuaranteedUpdate uses to detect no-op writes (etcd3 `store.go` compares the
 * encoded bytes; podsim compares the decoded JSON with Go's `omitempty` in mind: absent,
 * `undefined`, `null` and an empty list are the same value).
 */
import type { KubeObject, ObjectMeta } from '@podsim/api';

/** Deep copy of a JSON-shaped value (plain objects, arrays, primitives). */
export function deepClone<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = deepClone(v[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const k in v as Record<string, unknown>) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) out[k] = deepClone(x);
  }
  return out as T;
}

function isAbsent(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

/**
 * Semantic equality of two JSON values: key order does not matter, and absent / undefined /
 * null / `[]` are equal (what `omitempty` encodes identically). Numbers compare with `===`.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isAbsent(a) || isAbsent(b)) return isAbsent(a) && isAbsent(b);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!semanticEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k in ao) if (!semanticEqual(ao[k], bo[k])) return false;
  for (const k in bo) if (!(k in ao) && !isAbsent(bo[k])) return false;
  return true;
}

/** A shallow copy of `obj` with a copied `metadata` (for metadata-only stamps such as the RV). */
export function withMeta<T extends KubeObject>(obj: T, patch: Partial<ObjectMeta>): T {
  return { ...obj, metadata: { ...obj.metadata, ...patch } };
}

/** Removes `omitempty` metadata fields that are empty, so stored objects have one canonical shape. */
export function canonicalizeMeta(meta: ObjectMeta): void {
  const m = meta as Record<string, unknown>;
  for (const k in m) if (m[k] === undefined) delete m[k];
  for (const k of ['finalizers', 'ownerReferences', 'managedFields'] as const) {
    const v = m[k];
    if (v === null || (Array.isArray(v) && v.length === 0)) delete m[k];
  }
  for (const k of ['labels', 'annotations'] as const) {
    const v = m[k];
    if (v === null || (v !== undefined && Object.keys(v as object).length === 0)) delete m[k];
  }
  for (const k of ['generateName', 'selfLink', 'clusterName', 'namespace', 'uid', 'resourceVersion']) {
    if (m[k] === '' || m[k] === null) delete m[k];
  }
  if (m.generation === 0 || m.generation === null) delete m.generation;
  if (m.deletionTimestamp === null) delete m.deletionTimestamp;
  if (m.deletionGracePeriodSeconds === null) delete m.deletionGracePeriodSeconds;
  if (m.creationTimestamp === null) delete m.creationTimestamp;
}

/** `a` is a plain (non-array, non-null) object. */
export function isPlainObject(a: unknown): a is Record<string, unknown> {
  return a !== null && typeof a === 'object' && !Array.isArray(a);
}
