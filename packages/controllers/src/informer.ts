/**
 * A shared informer's store and handlers (client-go `tools/cache`: `threadSafeStore` with
 * indexers, `sharedIndexInformer` handler fan-out). Objects are kept by `namespace/name`; named
 * indexers map an object to index values (owner UID, node name …) and are maintained
 * incrementally, so controllers look up "pods of this ReplicaSet" without listing the namespace.
 * Watch events and relists are applied by {@link Reflector} (src/reflector.ts). Handlers run
 * synchronously after the store changed, in registration order.
 */
import type { KubeObject, ResourceName, WatchEvent } from '@podsim/api';
import { getControllerOf, objectKey } from './objects.js';

/** Index values of one object (empty = not indexed). */
export type IndexFunc<T> = (obj: T) => readonly string[];

export interface ResourceEventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

const EMPTY: ReadonlySet<string> = new Set();

export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: ResourceEventHandler<T>[] = [];
  /** True once the first list has been applied (`HasSynced`). */
  hasSynced = false;
  /** The last resourceVersion seen (list or event). */
  resourceVersion = '';

  constructor(readonly resource: ResourceName) {}

  /** Adds an indexer; a second registration under the same name is ignored (shared informers). */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) return;
    this.indexers.set(name, fn);
    const idx = new Map<string, Set<string>>();
    this.indices.set(name, idx);
    for (const [key, obj] of this.store) for (const v of fn(obj)) addTo(idx, v, key);
  }

  addEventHandler(h: ResourceEventHandler<T>): void {
    this.handlers.push(h);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  get size(): number {
    return this.store.size;
  }

  values(): IterableIterator<T> {
    return this.store.values();
  }

  /** Keys of objects with index value `value` under indexer `name` (live view; do not mutate). */
  indexKeys(name: string, value: string): ReadonlySet<string> {
    const idx = this.indices.get(name);
    if (!idx) throw new Error(`informer ${this.resource}: no indexer ${name}`);
    return idx.get(value) ?? EMPTY;
  }

  /** Objects with index value `value` under indexer `name`. */
  byIndex(name: string, value: string): T[] {
    const out: T[] = [];
    for (const k of this.indexKeys(name, value)) out.push(this.store.get(k)!);
    return out;
  }

  /** Distinct values present in an index (e.g. every node name that has pods). */
  indexValues(name: string): IterableIterator<string> {
    const idx = this.indices.get(name);
    if (!idx) throw new Error(`informer ${this.resource}: no indexer ${name}`);
    return idx.keys();
  }

  /**
   * Applies one watch event. ADDED of a known key is an update, MODIFIED of an unknown key an
   * add, DELETED of an unknown key is ignored. Returns false for ERROR (the caller relists).
   */
  applyEvent(ev: WatchEvent<KubeObject>): boolean {
    if (ev.type === 'ERROR') return false;
    if (ev.type === 'BOOKMARK') {
      const rv = ev.object.metadata?.resourceVersion;
      if (rv) this.resourceVersion = rv;
      return true;
    }
    const obj = ev.object as T;
    const rv = obj.metadata.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (ev.type === 'DELETED') this.remove(objectKey(obj), obj);
    else this.upsert(obj);
    return true;
  }

  /** Replaces the store with a list (`Replace`): adds, updates, and deletes for missing keys. */
  replace(items: readonly T[], resourceVersion: string): void {
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(objectKey(obj));
      this.upsert(obj);
    }
    for (const [key, old] of [...this.store]) if (!seen.has(key)) this.remove(key, old);
    this.resourceVersion = resourceVersion;
    this.hasSynced = true;
  }

  private upsert(obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    this.store.set(key, obj);
    this.reindex(key, old, obj);
    if (old) for (const h of this.handlers) h.onUpdate?.(old, obj);
    else for (const h of this.handlers) h.onAdd?.(obj);
  }

  private remove(key: string, last: T): void {
    const old = this.store.get(key);
    if (!old) return;
    this.store.delete(key);
    this.reindex(key, old, undefined);
    for (const h of this.handlers) h.onDelete?.(last);
  }

  private reindex(key: string, old: T | undefined, cur: T | undefined): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      const before = old ? fn(old) : [];
      const after = cur ? fn(cur) : [];
      if (before.length === after.length && before.every((v, i) => v === after[i])) continue;
      for (const v of before) removeFrom(idx, v, key);
      for (const v of after) addTo(idx, v, key);
    }
  }
}

function addTo(idx: Map<string, Set<string>>, v: string, key: string): void {
  let s = idx.get(v);
  if (!s) idx.set(v, (s = new Set()));
  s.add(key);
}

function removeFrom(idx: Map<string, Set<string>>, v: string, key: string): void {
  const s = idx.get(v);
  if (!s) return;
  s.delete(key);
  if (s.size === 0) idx.delete(v);
}

// ---- common indexers --------------------------------------------------------------------

/** Index by namespace (`cache.NamespaceIndex`). */
export const NAMESPACE_INDEX = 'namespace';
export const namespaceIndexFunc: IndexFunc<KubeObject> = (o) => [o.metadata.namespace ?? ''];

/** Index by the UID of the controlling owner reference. */
export const CONTROLLER_UID_INDEX = 'controllerUid';
export const controllerUidIndexFunc: IndexFunc<KubeObject> = (o) => {
  const ref = getControllerOf(o);
  return ref ? [ref.uid] : [];
};

/** Index by namespace, for objects without a controller (candidates for adoption). */
export const ORPHAN_NAMESPACE_INDEX = 'orphanNamespace';
export const orphanNamespaceIndexFunc: IndexFunc<KubeObject> = (o) => (getControllerOf(o) ? [] : [o.metadata.namespace ?? '']);

/** Index by every owner reference UID (the garbage collector's dependents). */
export const OWNER_UID_INDEX = 'ownerUid';
export const ownerUidIndexFunc: IndexFunc<KubeObject> = (o) => {
  const refs = o.metadata.ownerReferences;
  if (!refs || refs.length === 0) return [];
  if (refs.length === 1) return [refs[0].uid];
  return [...new Set(refs.map((r) => r.uid))];
};
