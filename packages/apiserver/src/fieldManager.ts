/**
 * Server-side apply's field ownership, the part kubectl users see (k8s.io/apiserver v0.22.8
 * `pkg/endpoints/handlers/fieldmanager`, structured-merge-diff): each `Apply` records the fields
 * its configuration sets as a `managedFields` entry (`FieldsV1`: `f:spec` / `f:replicas`, list
 * items by merge key `k:{"name":"c"}`), and an apply that sets a field another applier owns to a
 * different value fails with 409 `Apply failed with 1 conflict: conflict with "alice":
 * .spec.replicas` unless `force` (which takes the field over).
 *
 * Writes that are not applies record `operation: Update` entries ({@link updateOwnership}) when
 * the request names a manager (`podsim serve` always does: `?fieldManager=` or the user agent);
 * the simulated components' own requests name none, so their writes record nothing (and traces
 * stay as they were). A field a manager stops applying is removed when no other manager owns it
 * ({@link droppedByApply}). Simplified: the applied configuration is merged by strategic merge
 * patch, and the field set is taken from the JSON, not from the schema (atomic lists and maps as
 * upstream for the merge-keyed lists of patch.ts; every other list is atomic); subresource writes
 * (`status`, `scale`) record nothing.
 */
import type { KubeObject, Status } from '@podsim/api';
import { isPlainObject } from './objects.js';

/** One segment of a field path: a field name, or a list item by its merge key. */
type Segment = { readonly f: string } | { readonly k: Readonly<Record<string, unknown>> };

interface Leaf {
  readonly path: readonly Segment[];
  /** JSON of the value, to tell a conflict (same value is no conflict) */
  readonly value: string;
}

/** `.spec.template.spec.containers[name="c"].image` */
export function pathString(path: readonly Segment[]): string {
  return path
    .map((s) =>
      'f' in s
        ? `.${s.f}`
        : `[${Object.entries(s.k)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}]`,
    )
    .join('');
}

/** The leaf fields an applied configuration sets (apiVersion, kind, name, namespace and status excluded). */
export function leaves(obj: unknown, mergeKeys: Readonly<Record<string, string>>): Leaf[] {
  const out: Leaf[] = [];
  const walk = (v: unknown, path: Segment[], field: string | undefined) => {
    if (isPlainObject(v) && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v)) walk(x, [...path, { f: k }], k);
      return;
    }
    const key = field !== undefined ? mergeKeys[field] : undefined;
    if (Array.isArray(v) && key !== undefined && v.length > 0 && v.every((e) => isPlainObject(e) && e[key] !== undefined)) {
      for (const e of v as Record<string, unknown>[]) {
        const item: Segment = { k: { [key]: e[key] } };
        const rest = Object.entries(e).filter(([k]) => k !== key);
        if (rest.length === 0) out.push({ path: [...path, item], value: JSON.stringify(e) });
        for (const [k, x] of rest) walk(x, [...path, item, { f: k }], k);
      }
      return;
    }
    out.push({ path, value: JSON.stringify(v) });
  };
  if (!isPlainObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k === 'metadata' && isPlainObject(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!['name', 'namespace', 'managedFields', 'resourceVersion', 'uid', 'creationTimestamp'].includes(mk)) walk(mv, [{ f: 'metadata' }, { f: mk }], mk);
      continue;
    }
    walk(v, [{ f: k }], k);
  }
  return out;
}

/** `FieldsV1` of a set of leaf paths (`{"f:spec":{"f:replicas":{}}}`; list items carry `".": {}`). */
export function toFieldsV1(paths: readonly (readonly Segment[])[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let cur = root;
    for (const s of p) {
      const key = 'f' in s ? `f:${s.f}` : `k:${JSON.stringify(s.k)}`;
      cur[key] ??= 'k' in s ? { '.': {} } : {};
      cur = cur[key] as Record<string, unknown>;
    }
  }
  return root;
}

/** The leaf path strings a `FieldsV1` holds. */
export function fromFieldsV1(f: unknown): string[] {
  const out: string[] = [];
  const walk = (o: Record<string, unknown>, prefix: string) => {
    const children = Object.keys(o).filter((k) => k.startsWith('f:') || k.startsWith('k:'));
    if (children.length === 0 && prefix !== '') out.push(prefix);
    for (const k of children) {
      const seg = k.startsWith('f:')
        ? `.${k.slice(2)}`
        : `[${Object.entries(JSON.parse(k.slice(2)) as Record<string, unknown>)
            .map(([a, b]) => `${a}=${JSON.stringify(b)}`)
            .join(',')}]`;
      const child = o[k];
      walk(isPlainObject(child) ? child : {}, prefix + seg);
    }
  };
  if (isPlainObject(f)) walk(f, '');
  return out;
}

/** One `metav1.ManagedFieldsEntry`. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
}

/**
 * How a conflict names a manager (fieldmanager `printManager`): `"alice"` for an applier,
 * `"kubectl-edit" using apps/v1` for an Update manager (the identifier carries no time).
 */
function printManager(e: ManagedFieldsEntry): string {
  const m = JSON.stringify(e.manager ?? '');
  return e.operation === 'Update' ? `${m} using ${e.apiVersion ?? ''}` : m;
}

/**
 * The apply of `applied` by `manager` onto `live` (undefined for a create): the new
 * `managedFields` of the object, or a 409 Conflict Status. `qualified` names the object for the
 * Status (`deployments.apps "web"`).
 */
export function applyOwnership(
  live: KubeObject | undefined,
  applied: unknown,
  manager: string,
  force: boolean,
  apiVersion: string,
  time: string,
  mergeKeys: Readonly<Record<string, string>>,
): ManagedFieldsEntry[] | Status {
  const mine = leaves(applied, mergeKeys);
  const current = new Map(live ? leaves(live, mergeKeys).map((l) => [pathString(l.path), l.value] as const) : []);
  const entries = ((live?.metadata.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) => e.manager !== manager || e.operation !== 'Apply');
  const conflicts: Array<{ manager: string; field: string }> = [];
  const taken = new Map<ManagedFieldsEntry, Set<string>>();
  for (const e of entries) {
    const owned = new Set(fromFieldsV1(e.fieldsV1));
    for (const l of mine) {
      const p = pathString(l.path);
      if (!owned.has(p)) continue;
      // Setting a field to the value it already has is shared ownership, not a conflict.
      if (current.get(p) === l.value) continue;
      if (force) {
        if (!taken.has(e)) taken.set(e, new Set());
        taken.get(e)!.add(p);
      } else conflicts.push({ manager: printManager(e), field: p });
    }
  }
  if (conflicts.length > 0) {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
    const parts = [...byManager].map(([m, fs]) => (fs.length === 1 ? `conflict with ${m}: ${fs[0]}` : `conflicts with ${m}:\n${fs.map((f) => `- ${f}`).join('\n')}`));
    const n = conflicts.length;
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`,
      reason: 'Conflict',
      details: { causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.manager}`, field: c.field })) },
      code: 409,
    } as Status;
  }
  const out: ManagedFieldsEntry[] = [];
  for (const e of entries) {
    const lost = taken.get(e);
    if (!lost) {
      out.push(e);
      continue;
    }
    // Forced: the fields move to this manager.
    const keep = fromFieldsV1(e.fieldsV1).filter((p) => !lost.has(p));
    if (keep.length === 0) continue;
    const keepLeaves = leaves(live, mergeKeys).filter((l) => keep.includes(pathString(l.path)));
    out.push({ ...e, fieldsV1: toFieldsV1(keepLeaves.map((l) => l.path)) });
  }
  out.push({ manager, operation: 'Apply', apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(mine.map((l) => l.path)) });
  return out;
}

/** `.spec.replicas`-style paths of leaves, keyed, with their segments. */
function leafMap(obj: unknown, mergeKeys: Readonly<Record<string, string>>): Map<string, Leaf> {
  return new Map(leaves(obj, mergeKeys).map((l) => [pathString(l.path), l] as const));
}

/**
 * A write that is not an apply (create, update, a json / merge / strategic patch) by `manager`
 * (`?fieldManager=`, else the user agent's prefix: `managerOrUserAgent`), as the fieldmanager's
 * `Update` records it (k8s.io/apiserver v0.22.8 `fieldmanager.FieldManager.Update`,
 * structured-merge-diff `Updater.update`): the fields the write adds or changes join the
 * manager's `operation: Update` entry and leave every other manager's (an update takes fields
 * over without conflicts); fields the write removes leave every entry. An entry left with no
 * field is dropped. Returns the new `managedFields` of `updated` (`live` undefined for a create,
 * where every field is the manager's).
 */
export function updateOwnership(
  live: KubeObject | undefined,
  updated: KubeObject,
  manager: string,
  apiVersion: string,
  time: string,
  mergeKeys: Readonly<Record<string, string>>,
): ManagedFieldsEntry[] {
  const before = live ? leafMap(live, mergeKeys) : new Map<string, Leaf>();
  const after = leafMap(updated, mergeKeys);
  const changed = new Set([...after].filter(([p, l]) => before.get(p)?.value !== l.value).map(([p]) => p));
  const removed = new Set([...before.keys()].filter((p) => !after.has(p)));
  const entries = (live?.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const out: ManagedFieldsEntry[] = [];
  let mine: Set<string> = new Set();
  for (const e of entries) {
    const owned = fromFieldsV1(e.fieldsV1).filter((p) => !removed.has(p));
    if (e.manager === manager && e.operation === 'Update' && e.apiVersion === apiVersion) {
      mine = new Set(owned);
      continue;
    }
    const keep = owned.filter((p) => !changed.has(p));
    if (keep.length === owned.length && owned.length === fromFieldsV1(e.fieldsV1).length) out.push(e);
    else if (keep.length > 0) out.push({ ...e, fieldsV1: toFieldsV1(keep.map((p) => (after.get(p) ?? before.get(p))!.path)) });
  }
  for (const p of changed) mine.add(p);
  const paths = [...mine].map((p) => (after.get(p) ?? before.get(p))?.path).filter((p): p is Segment[] => p !== undefined);
  if (paths.length > 0) out.push({ manager, operation: 'Update', apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(paths) });
  return out;
}

/**
 * The fields `manager`'s previous apply set that `applied` (its new configuration) no longer
 * sets and that no other manager owns: structured-merge-diff removes them from the object on
 * apply (`Updater.prune`). Each as its segments (for {@link removeFields}).
 */
export function droppedByApply(live: KubeObject, applied: unknown, manager: string, mergeKeys: Readonly<Record<string, string>>): (readonly Segment[])[] {
  const entries = (live.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const prev = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  if (!prev) return [];
  const now = new Set(leaves(applied, mergeKeys).map((l) => pathString(l.path)));
  const others = new Set(entries.filter((e) => e !== prev).flatMap((e) => fromFieldsV1(e.fieldsV1)));
  const current = leafMap(live, mergeKeys);
  return fromFieldsV1(prev.fieldsV1)
    .filter((p) => !now.has(p) && !others.has(p))
    .map((p) => current.get(p)?.path)
    .filter((p): p is Segment[] => p !== undefined);
}

/** Deletes the fields at `paths` from `obj` in place (a list item by its merge key; a whole item when the path ends at it). */
export function removeFields(obj: unknown, paths: readonly (readonly Segment[])[]): void {
  for (const path of paths) {
    let cur: unknown = obj;
    for (let i = 0; i < path.length; i++) {
      const s = path[i];
      const last = i === path.length - 1;
      if ('f' in s) {
        if (!isPlainObject(cur)) break;
        if (last) delete cur[s.f];
        else cur = cur[s.f];
      } else {
        if (!Array.isArray(cur)) break;
        const [k, v] = Object.entries(s.k)[0];
        const idx = cur.findIndex((e) => isPlainObject(e) && e[k] === v);
        if (idx < 0) break;
        if (last) cur.splice(idx, 1);
        else cur = cur[idx];
      }
    }
  }
}
