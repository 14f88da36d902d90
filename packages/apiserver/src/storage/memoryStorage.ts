/**
 * In-memory MVCC storage with etcd semantics, standing in for k8s.io/apiserver v0.22.8
 * `pkg/storage/etcd3/store.go` (Create, conditionalDelete, GuaranteedUpdate's "no change → no
 * write" rule) plus etcd's revision history with compaction (`watcher.go` reports ErrCompacted
 * as 410 Expired). One global revision; a bounded ring of the last `historySize` events, and per
 * resource prefix an index of the ring's events of that prefix (the watch cache keeps one
 * `watchCache` per resource, `pkg/storage/cacher/watch_cache.go` `GetAllEventsSinceThreadUnsafe`),
 * so a re-watch costs the events of its own resource, not the whole history.
 *
 * Invariant: stored objects are never mutated; every write stores a fresh top-level object
 * whose `metadata.resourceVersion` is the write's revision.
 */
import type { KubeObject, Status } from '@podsim/api';
import { newInternalError } from '../errors.js';
import { semanticEqual } from '../objects.js';
import {
  ErrCodeKeyExists,
  ErrCodeKeyNotFound,
  type HistoryResult,
  type Storage,
  type StorageError,
  type StorageEvent,
  type StepError,
  type StoragePreconditions,
  type UpdateFunc,
  type ValidateDeletion,
  checkPreconditions,
  isStepError,
  newStorageError,
} from './interfaces.js';

/** Default number of events kept for watch-from-RV (configurable per apiserver). */
export const DEFAULT_HISTORY_SIZE = 10_000;

/** `/registry/pods/ns/name` → `pods`. */
export function keyPrefix(key: string): string {
  const a = key.indexOf('/', 1);
  const b = key.indexOf('/', a + 1);
  return b < 0 ? key.slice(a + 1) : key.slice(a + 1, b);
}

/**
 * A fresh top level and `metadata` with `resourceVersion` = `rv` (same keys in the same order as
 * `{ ...obj, metadata: { ...obj.metadata, resourceVersion } }`). Copied key by key: a spread site
 * that sees the metadata of every kind (and metadata a `delete` turned into a dictionary) runs
 * V8's megamorphic clone (~1 µs), the loop a fraction of it; the copies get fast properties.
 */
function stamp(obj: KubeObject, rv: number): KubeObject {
  const src = obj.metadata as Record<string, unknown>;
  const meta: Record<string, unknown> = {};
  for (const k in src) meta[k] = src[k];
  meta.resourceVersion = String(rv);
  const top = obj as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k in top) out[k] = k === 'metadata' ? meta : top[k];
  if (!('metadata' in out)) out.metadata = meta;
  return out as unknown as KubeObject;
}

/** Deep-freezes a JSON value (debug aid: any later mutation of a stored object throws). */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

function sameIgnoringRV(a: KubeObject, b: KubeObject): boolean {
  const ma = a.metadata;
  const mb = b.metadata;
  for (const k in a) if (k !== 'metadata' && !semanticEqual((a as unknown as Record<string, unknown>)[k], (b as unknown as Record<string, unknown>)[k])) return false;
  for (const k in b) if (k !== 'metadata' && !(k in a) && !semanticEqual(undefined, (b as unknown as Record<string, unknown>)[k])) return false;
  for (const k in ma) if (k !== 'resourceVersion' && !semanticEqual((ma as Record<string, unknown>)[k], (mb as Record<string, unknown>)[k])) return false;
  for (const k in mb) if (k !== 'resourceVersion' && !(k in ma) && !semanticEqual(undefined, (mb as Record<string, unknown>)[k])) return false;
  return true;
}

export class MemoryStorage implements Storage {
  private rev = 1;
  private readonly byPrefix = new Map<string, Map<string, KubeObject>>();
  private readonly sortedKeys = new Map<string, string[]>();
  private readonly ring: (StorageEvent | undefined)[];
  private ringStart = 0;
  private ringLen = 0;
  /** Revision of the newest event evicted from the history (0: nothing evicted yet). */
  private compacted = 0;
  private listener: ((ev: StorageEvent) => void) | undefined;
  /** Per prefix: that prefix's events still in the ring, oldest first (from `head`). */
  private readonly historyByPrefix = new Map<string, PrefixHistory>();

  /**
   * `historySize` ≥ 1: how many events watch-from-RV can replay. `freeze`: deep-freeze every
   * stored object, so that code mutating a stored (or received) object fails loudly.
   */
  constructor(
    readonly historySize: number = DEFAULT_HISTORY_SIZE,
    private readonly freeze = false,
  ) {
    if (!(historySize >= 1)) throw new Error(`historySize must be ≥ 1, got ${historySize}`);
    this.ring = new Array(historySize);
  }

  get revision(): number {
    return this.rev;
  }

  onEvent(listener: (ev: StorageEvent) => void): void {
    this.listener = listener;
  }

  get(key: string): KubeObject | undefined {
    return this.byPrefix.get(keyPrefix(key))?.get(key);
  }

  list(prefix: string): KubeObject[] {
    const p = keyPrefix(prefix);
    const m = this.byPrefix.get(p);
    if (!m) return [];
    let keys = this.sortedKeys.get(p);
    if (!keys) {
      keys = [...m.keys()].sort();
      this.sortedKeys.set(p, keys);
    }
    const out: KubeObject[] = [];
    // Keys are sorted, so a namespace prefix is one contiguous run.
    for (const k of keys) if (k.startsWith(prefix)) out.push(m.get(k)!);
    return out;
  }

  create(key: string, obj: KubeObject, dryRun = false): KubeObject | StorageError | Status {
    if (obj.metadata.resourceVersion) return newInternalError('resourceVersion should not be set on objects to be created');
    const p = keyPrefix(key);
    const m = this.byPrefix.get(p);
    if (m?.has(key)) return newStorageError(ErrCodeKeyExists, key, 0);
    if (dryRun) return obj;
    const stored = this.seal(stamp(obj, ++this.rev));
    this.put(p, key, stored, true);
    this.emit({ type: 'ADDED', key, prefix: p, object: stored, rv: this.rev });
    return stored;
  }

  delete(key: string, preconditions: StoragePreconditions | undefined, validateDeletion: ValidateDeletion | undefined, dryRun = false): KubeObject | StepError {
    const p = keyPrefix(key);
    const cur = this.byPrefix.get(p)?.get(key);
    if (!cur) return newStorageError(ErrCodeKeyNotFound, key, 0);
    const perr = checkPreconditions(preconditions, key, cur);
    if (perr) return perr;
    const verr = validateDeletion?.(cur);
    if (verr) return verr;
    if (dryRun) return cur;
    this.rev++;
    const m = this.byPrefix.get(p)!;
    m.delete(key);
    this.sortedKeys.delete(p);
    this.emit({ type: 'DELETED', key, prefix: p, object: this.seal(stamp(cur, this.rev)), prevObject: cur, rv: this.rev });
    return cur;
  }

  guaranteedUpdate(
    key: string,
    ignoreNotFound: boolean,
    preconditions: StoragePreconditions | undefined,
    tryUpdate: UpdateFunc,
    dryRun = false,
  ): KubeObject | StepError {
    const p = keyPrefix(key);
    const cur = this.byPrefix.get(p)?.get(key);
    if (!cur && !ignoreNotFound) return newStorageError(ErrCodeKeyNotFound, key, 0);
    const perr = checkPreconditions(preconditions, key, cur ?? { metadata: {} });
    if (perr) return perr;
    const next = tryUpdate(cur);
    if (isStepError(next)) return next;
    // etcd3 GuaranteedUpdate: if the new encoding equals the stored bytes, nothing is written.
    if (cur && sameIgnoringRV(next, cur)) return cur;
    if (dryRun) return cur ? stamp(next, Number(cur.metadata.resourceVersion)) : next;
    const stored = this.seal(stamp(next, ++this.rev));
    this.put(p, key, stored, !cur);
    this.emit(cur ? { type: 'MODIFIED', key, prefix: p, object: stored, prevObject: cur, rv: this.rev } : { type: 'ADDED', key, prefix: p, object: stored, rv: this.rev });
    return stored;
  }

  /**
   * The events of `prefix` with revision > `rv`, oldest first (`watchCache.GetAllEventsSince`):
   * `tooOld` when `rv` is older than the oldest revision the history still covers (410 Expired),
   * `current` when `rv` is in the future. Cost: a binary search plus the events returned.
   */
  eventsSince(prefix: string, rv: number): HistoryResult {
    if (rv > this.rev) return { ok: false, tooOld: false, current: this.rev };
    if (rv < this.compacted) return { ok: false, tooOld: true, oldest: this.compacted };
    const h = this.historyByPrefix.get(prefix);
    if (!h) return { ok: true, events: [] };
    // Binary search for the first event with revision > rv (revisions increase along the list).
    let lo = h.head;
    let hi = h.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h.events[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return { ok: true, events: h.events.slice(lo) };
  }

  private seal(obj: KubeObject): KubeObject {
    return this.freeze ? deepFreeze(obj) : obj;
  }

  private put(prefix: string, key: string, obj: KubeObject, isNew: boolean): void {
    let m = this.byPrefix.get(prefix);
    if (!m) {
      m = new Map();
      this.byPrefix.set(prefix, m);
    }
    m.set(key, obj);
    if (isNew) this.sortedKeys.delete(prefix);
  }

  private emit(ev: StorageEvent): void {
    if (this.ringLen === this.historySize) {
      const evicted = this.ring[this.ringStart]!;
      this.compacted = evicted.rv;
      // The evicted event is the oldest of its prefix too: drop it from the front of its index.
      const eh = this.historyByPrefix.get(evicted.prefix)!;
      eh.events[eh.head++] = undefined as unknown as StorageEvent;
      if (eh.head === eh.events.length) {
        eh.events.length = 0;
        eh.head = 0;
      } else if (eh.head >= 1024 && eh.head * 2 >= eh.events.length) {
        // Amortised O(1): compact once the dead front is at least half the array.
        eh.events.splice(0, eh.head);
        eh.head = 0;
      }
      this.ring[this.ringStart] = ev;
      this.ringStart = (this.ringStart + 1) % this.historySize;
    } else {
      this.ring[(this.ringStart + this.ringLen) % this.historySize] = ev;
      this.ringLen++;
    }
    let h = this.historyByPrefix.get(ev.prefix);
    if (!h) this.historyByPrefix.set(ev.prefix, (h = { events: [], head: 0 }));
    h.events.push(ev);
    this.listener?.(ev);
  }
}

/** One prefix's slice of the history: `events[head..]` are live, oldest first. */
interface PrefixHistory {
  readonly events: StorageEvent[];
  head: number;
}
