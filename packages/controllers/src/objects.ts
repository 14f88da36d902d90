/**
 * Object plumbing shared by the controllers: cache keys (client-go `cache.MetaNamespaceKeyFunc`),
 * controller references (apimachinery `metav1.GetControllerOf`, `NewControllerRef`), omitempty-
 * aware status equality (on `deepEqual` of packages/api/src/equality.ts) and a plain-data deep
 * copy. Objects from informers are shared and never mutated: copy, then edit.
 */
import { deepEqual, type KubeObject, type OwnerReference } from '@podsim/api';

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? '');
}

/** The key of `name` in `namespace` (or the bare name when `namespace` is empty). */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key made by {@link objectKey} into namespace (may be '') and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** `metav1.GetControllerOf`: the owner reference with `controller: true`, if any. */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  const refs = obj.metadata.ownerReferences;
  if (!refs) return undefined;
  for (const r of refs) if (r.controller === true) return r;
  return undefined;
}

/** `metav1.NewControllerRef`: a controller reference that blocks the owner's foreground deletion. */
export function newControllerRef(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * Older first by `creationTimestamp`, the name breaking ties: the Deployment controller's
 * `ReplicaSetsByCreationTimestamp` and pod GC's `byCreationTimestamp` (a sort comparator).
 */
export function byCreationTimestamp(a: KubeObject, b: KubeObject): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** Deep copy of plain data (objects travel as JSON-shaped values). */
export function deepCopy<T>(v: T): T {
  return structuredClone(v);
}

/** Equality of two string maps (labels, annotations); absent equals empty. */
export function mapsEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ak = a ? Object.keys(a) : [];
  const bk = b ? Object.keys(b) : [];
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (a![k] !== b?.[k]) return false;
  return true;
}

/** Stable JSON with sorted keys and `undefined` fields dropped (hash input, deterministic). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

/**
 * Drops what Go's `omitempty` would not serialise (undefined, null, 0, '', false, empty arrays
 * and objects), so that a status read back from the apiserver compares equal to the one computed.
 */
export function stripEmpty(v: unknown): unknown {
  if (v === null || v === undefined || v === 0 || v === '' || v === false) return undefined;
  if (Array.isArray(v)) {
    const a = v.map(stripEmpty);
    return a.length === 0 ? undefined : a;
  }
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    let n = 0;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const y = stripEmpty(x);
      if (y !== undefined) {
        out[k] = y;
        n++;
      }
    }
    return n === 0 ? undefined : out;
  }
  return v;
}

/** `equality.Semantic.DeepEqual` of two statuses, with omitempty zero values ignored. */
export function omitEmptyEqual(a: unknown, b: unknown): boolean {
  return deepEqual(stripEmpty(a), stripEmpty(b));
}

/**
 * The merge patch that sets an object's ownerReferences to `refs` (null when empty): how the
 * ControllerRefManagers adopt (`AdoptPod`, `AdoptControllerRevision`) and release (`ReleasePod`).
 * Upstream sends a strategic merge patch keyed by owner uid; for these lists the effect is the same.
 */
export function patchOwnerReferences(resource: 'pods' | 'controllerrevisions', obj: KubeObject, refs: readonly OwnerReference[]) {
  return {
    type: 'ApiPatch' as const,
    resource,
    namespace: obj.metadata.namespace,
    name: obj.metadata.name ?? '',
    patchType: 'merge' as const,
    patch: { metadata: { ownerReferences: refs.length > 0 ? refs : null } },
  };
}
