/**
 * Pod config merging: `pkg/kubelet/config/config.go` `podStorage.merge` in
 * `PodConfigNotificationIncremental` mode (v1.22.8; spec §4.1). The apiserver source hands over
 * the full list of the node's pods after every watch event (an UndeltaStore SET); merge compares
 * it with its cache by UID and emits REMOVE, ADD, UPDATE, DELETE, RECONCILE in that order, plus
 * an empty ADD the first time a source is seen with nothing to add (marks the source ready).
 * Objects are never mutated: the cached "in place" update builds a new object.
 */
import type { Pod } from '@podsim/api';
import { deepEqual } from '@podsim/api';

export type PodOperation = 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE';

/** `kubetypes.PodUpdate`. */
export interface PodUpdate {
  readonly op: PodOperation;
  readonly pods: readonly Pod[];
  readonly source: string;
}

/** `podsDifferSemantically`: spec, labels, deletionTimestamp, deletionGracePeriodSeconds, annotations. */
export function podsDifferSemantically(existing: Pod, ref: Pod): boolean {
  if (existing === ref) return false;
  const a = existing.metadata;
  const b = ref.metadata;
  return !(
    a.deletionTimestamp === b.deletionTimestamp &&
    a.deletionGracePeriodSeconds === b.deletionGracePeriodSeconds &&
    deepEqual(a.labels ?? {}, b.labels ?? {}) &&
    deepEqual(a.annotations ?? {}, b.annotations ?? {}) &&
    deepEqual(existing.spec, ref.spec)
  );
}

type Kind = 'update' | 'reconcile' | 'delete' | 'none';

/** The empty list mergeOne passes for the ops a single event cannot produce (never emitted: emit skips empty lists). */
const NONE: Pod[] = [];

/**
 * `checkAndUpdatePod`: classifies `ref` against the cached `existing` and returns the new cached
 * object (spec, labels, dts, dgps, status, annotations taken from `ref`; the rest kept).
 */
export function checkAndUpdatePod(existing: Pod, ref: Pod): { kind: Kind; pod: Pod } {
  if (!podsDifferSemantically(existing, ref)) {
    if (!deepEqual(existing.status ?? {}, ref.status ?? {})) return { kind: 'reconcile', pod: { ...existing, status: ref.status } };
    return { kind: 'none', pod: existing };
  }
  const meta = { ...existing.metadata, labels: ref.metadata.labels, annotations: ref.metadata.annotations };
  if (ref.metadata.deletionTimestamp === undefined) delete meta.deletionTimestamp;
  else meta.deletionTimestamp = ref.metadata.deletionTimestamp;
  if (ref.metadata.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
  else meta.deletionGracePeriodSeconds = ref.metadata.deletionGracePeriodSeconds;
  const pod: Pod = { ...existing, metadata: meta, spec: ref.spec, status: ref.status };
  return { kind: ref.metadata.deletionTimestamp !== undefined ? 'delete' : 'update', pod };
}

/** The per-source cache of `podStorage` and its merge. */
export class PodStorage {
  private readonly pods = new Map<string, Map<string, Pod>>();
  private readonly sourcesSeen = new Set<string>();

  /** The cached pods of `source` (UID → pod). */
  podsOf(source: string): ReadonlyMap<string, Pod> {
    return this.pods.get(source) ?? new Map();
  }

  /** True once `source` delivered its first SET (`sourcesReady`). */
  seen(source: string): boolean {
    return this.sourcesSeen.has(source);
  }

  /**
   * `merge(source, SET{pods})`: the full desired list of `source`. Returns the non-empty
   * updates in emission order (REMOVE, ADD, UPDATE, DELETE, [empty ADD on first SET], RECONCILE).
   */
  merge(source: string, set: readonly Pod[]): PodUpdate[] {
    const first = !this.sourcesSeen.has(source);
    this.sourcesSeen.add(source);
    const old = this.pods.get(source) ?? new Map<string, Pod>();
    const next = new Map<string, Pod>();
    const adds: Pod[] = [];
    const updates: Pod[] = [];
    const deletes: Pod[] = [];
    const reconciles: Pod[] = [];
    const removes: Pod[] = [];
    for (const ref of set) {
      const uid = ref.metadata.uid!;
      const existing = old.get(uid);
      if (existing === undefined) {
        next.set(uid, ref);
        adds.push(ref);
        continue;
      }
      const r = checkAndUpdatePod(existing, ref);
      next.set(uid, r.pod);
      if (r.kind === 'update') updates.push(r.pod);
      else if (r.kind === 'reconcile') reconciles.push(r.pod);
      else if (r.kind === 'delete') deletes.push(r.pod);
    }
    for (const [uid, existing] of old) if (!next.has(uid)) removes.push(existing);
    this.pods.set(source, next);
    return emit(source, first, removes, adds, updates, deletes, reconciles);
  }

  /**
   * The same result as `merge(source, <cached list with one pod changed>)` for a single watch
   * event, in O(1) instead of O(pods) (the UndeltaStore hands merge the full list after every
   * event; only the changed UID can produce an op). `pod` undefined = the UID is gone.
   */
  mergeOne(source: string, uid: string, pod: Pod | undefined): PodUpdate[] {
    const first = !this.sourcesSeen.has(source);
    this.sourcesSeen.add(source);
    let cache = this.pods.get(source);
    if (!cache) this.pods.set(source, (cache = new Map()));
    const existing = cache.get(uid);
    const none = NONE;
    if (pod === undefined) {
      if (existing === undefined) return emit(source, first, none, none, none, none, none);
      cache.delete(uid);
      return emit(source, first, [existing], none, none, none, none);
    }
    if (existing === undefined) {
      cache.set(uid, pod);
      return emit(source, first, none, [pod], none, none, none);
    }
    const r = checkAndUpdatePod(existing, pod);
    cache.set(uid, r.pod);
    const one = [r.pod];
    return emit(source, first, none, none, r.kind === 'update' ? one : none, r.kind === 'delete' ? one : none, r.kind === 'reconcile' ? one : none);
  }
}

function emit(source: string, first: boolean, removes: Pod[], adds: Pod[], updates: Pod[], deletes: Pod[], reconciles: Pod[]): PodUpdate[] {
  const out: PodUpdate[] = [];
  if (removes.length > 0) out.push({ op: 'REMOVE', pods: removes, source });
  if (adds.length > 0) out.push({ op: 'ADD', pods: adds, source });
  if (updates.length > 0) out.push({ op: 'UPDATE', pods: updates, source });
  if (deletes.length > 0) out.push({ op: 'DELETE', pods: deletes, source });
  if (first && adds.length === 0 && updates.length === 0 && deletes.length === 0) out.push({ op: 'ADD', pods: [], source });
  if (reconciles.length > 0) out.push({ op: 'RECONCILE', pods: reconciles, source });
  return out;
}
