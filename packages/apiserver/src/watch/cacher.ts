/**
 * Watch fan-out, after k8s.io/apiserver v0.22.8 `pkg/storage/cacher/cacher.go`: `Cacher.Watch`
 * registers a `cacheWatcher` (prefix, label and field predicate); `dispatchEvent` finds the
 * interested watchers (indexed like the watch cache's trigger functions: `spec.nodeName` for
 * pods, `metadata.name`, namespace) and `convertToWatchEvent` decides per watcher:
 *   current matches, previous does not → ADDED; both → MODIFIED;
 *   only previous matches (or a delete) → DELETED with the previous object stamped with the
 *   event's resourceVersion.
 * podsim addition: events are grouped into one {@link ApiWatchEvent} body per (type, format),
 * multicast to every matching watcher actor, splitting a recipient off when its own watch ids
 * would collide with the ids listed in the shared body.
 */
import type { ActorId, ApiWatchEvent, Clock, IncludeObjectPolicy, KubeObject, Status, VirtualTime, WatchEventType } from '@podsim/api';
import { withMeta } from '../objects.js';
import { toTable } from '../printers.js';
import { type ParsedFieldSelector, equalityValue, fieldsMatch, selectableFields } from '../selectors/fields.js';
import { type ParsedLabelSelector, labelsMatch } from '@podsim/api';
import type { StorageEvent } from '../storage/interfaces.js';

/** One registered watch (`cacheWatcher`). */
export interface Watcher {
  readonly client: ActorId;
  readonly watchId: string;
  /** API resource name (`pods`). */
  readonly resource: string;
  /** Storage prefix segment its events carry (`pods`, `minions`). */
  readonly storagePrefix: string;
  /** Key prefix it covers (`/registry/pods/default/` or `/registry/pods/`). */
  readonly keyPrefix: string;
  /** The namespace it is restricted to, if any. */
  readonly namespace?: string;
  readonly label: ParsedLabelSelector;
  readonly fields: ParsedFieldSelector;
  readonly asTable: boolean;
  readonly wide: boolean;
  readonly includeObject: IncludeObjectPolicy;
}

/** One multicast: the same body to several actors. */
export interface WatchDelivery {
  readonly to: readonly ActorId[];
  readonly body: ApiWatchEvent;
}

/** Fields the cacher indexes watchers by (the pods `spec.nodeName` trigger, and names). */
const INDEXED_FIELDS = ['spec.nodeName', 'metadata.name'] as const;

interface PrefixIndex {
  /** Watchers without an index: checked against every event. */
  readonly all: Set<Watcher>;
  readonly byNamespace: Map<string, Set<Watcher>>;
  readonly byField: Map<string, Map<string, Set<Watcher>>>;
}

/** Per-event lazily computed facts shared by all candidate watchers. */
class EventView {
  private curFields?: Record<string, string>;
  private prevFields?: Record<string, string>;
  private prevStamped?: KubeObject;
  constructor(
    readonly ev: StorageEvent,
    readonly resource: string,
  ) {}
  fieldsOf(which: 'cur' | 'prev'): Record<string, string> {
    if (which === 'cur') return (this.curFields ??= selectableFields(this.resource, this.ev.object));
    return (this.prevFields ??= selectableFields(this.resource, this.ev.prevObject!));
  }
  /** The previous object with the event's resourceVersion (what a DELETED transition carries). */
  deletedObject(): KubeObject {
    if (this.ev.type === 'DELETED') return this.ev.object;
    return (this.prevStamped ??= withMeta(this.ev.prevObject!, { resourceVersion: String(this.ev.rv) }));
  }
}

function watcherMatches(w: Watcher, view: EventView, obj: KubeObject, which: 'cur' | 'prev'): boolean {
  if (!view.ev.key.startsWith(w.keyPrefix)) return false;
  if (!labelsMatch(w.label, obj.metadata.labels)) return false;
  return w.fields.terms.length === 0 || fieldsMatch(w.fields, view.fieldsOf(which));
}

/** `cacheWatcher.convertToWatchEvent`: the event type this watcher sees, or undefined. */
function convertToWatchEvent(w: Watcher, view: EventView): { type: WatchEventType; object: KubeObject } | undefined {
  const ev = view.ev;
  const curObjPasses = ev.type !== 'DELETED' && watcherMatches(w, view, ev.object, 'cur');
  const oldObjPasses = ev.prevObject !== undefined && watcherMatches(w, view, ev.prevObject, 'prev');
  if (curObjPasses && !oldObjPasses) return { type: 'ADDED', object: ev.object };
  if (curObjPasses && oldObjPasses) return { type: 'MODIFIED', object: ev.object };
  // return a delete event with the previous object content, but with the event's resource version
  if (!curObjPasses && oldObjPasses) return { type: 'DELETED', object: view.deletedObject() };
  return undefined;
}

/** One (type, format) group of a dispatch. */
interface Group {
  readonly type: WatchEventType;
  readonly format: string;
  readonly object: KubeObject;
  readonly sample: Watcher;
  readonly recipients: Map<ActorId, string[]>;
}

/** How a watcher wants objects rendered (one body per distinct format). */
function formatKey(w: Watcher): string {
  return w.asTable ? `T${w.wide ? 1 : 0}${w.includeObject}` : 'J';
}

export class Cacher {
  private readonly byPrefix = new Map<string, PrefixIndex>();
  private readonly byClient = new Map<ActorId, Map<string, Watcher>>();
  private count = 0;

  /** Number of registered watches. */
  get size(): number {
    return this.count;
  }

  /** The watch `(client, watchId)`, if registered. */
  lookup(client: ActorId, watchId: string): Watcher | undefined {
    return this.byClient.get(client)?.get(watchId);
  }

  /** Registers `w`, replacing any watch with the same `(client, watchId)`. */
  add(w: Watcher): void {
    this.remove(w.client, w.watchId);
    let cm = this.byClient.get(w.client);
    if (!cm) {
      cm = new Map();
      this.byClient.set(w.client, cm);
    }
    cm.set(w.watchId, w);
    const idx = this.index(w.storagePrefix);
    const f = INDEXED_FIELDS.find((name) => equalityValue(w.fields, name) !== undefined);
    if (f) {
      let m = idx.byField.get(f);
      if (!m) idx.byField.set(f, (m = new Map()));
      const v = equalityValue(w.fields, f)!;
      let s = m.get(v);
      if (!s) m.set(v, (s = new Set()));
      s.add(w);
    } else if (w.namespace !== undefined) {
      let s = idx.byNamespace.get(w.namespace);
      if (!s) idx.byNamespace.set(w.namespace, (s = new Set()));
      s.add(w);
    } else {
      idx.all.add(w);
    }
    this.count++;
  }

  /** Removes a watch; false if it was not registered. */
  remove(client: ActorId, watchId: string): boolean {
    const w = this.byClient.get(client)?.get(watchId);
    if (!w) return false;
    this.byClient.get(client)!.delete(watchId);
    const idx = this.index(w.storagePrefix);
    idx.all.delete(w);
    if (w.namespace !== undefined) idx.byNamespace.get(w.namespace)?.delete(w);
    for (const f of INDEXED_FIELDS) {
      const v = equalityValue(w.fields, f);
      if (v !== undefined) idx.byField.get(f)?.get(v)?.delete(w);
    }
    this.count--;
    return true;
  }

  private index(prefix: string): PrefixIndex {
    let idx = this.byPrefix.get(prefix);
    if (!idx) {
      idx = { all: new Set(), byNamespace: new Map(), byField: new Map() };
      this.byPrefix.set(prefix, idx);
    }
    return idx;
  }

  /**
   * Candidate watchers for an event: unindexed, its namespace's, and the index hits of old and
   * new state, in that order. `add` puts each watcher in exactly one of these sets (`all`, one
   * namespace's, or one value of one indexed field), and an event reads one namespace and two
   * distinct values at most per field, so the sets are disjoint: a list, no de-duplication.
   */
  private candidates(view: EventView): readonly Watcher[] {
    const idx = this.byPrefix.get(view.ev.prefix);
    if (!idx) return [];
    const out: Watcher[] = [];
    for (const w of idx.all) out.push(w);
    const ns = (view.ev.object.metadata.namespace ?? view.ev.prevObject?.metadata.namespace) as string | undefined;
    if (ns !== undefined) {
      const s = idx.byNamespace.get(ns);
      if (s) for (const w of s) out.push(w);
    }
    for (const [f, m] of idx.byField) {
      if (m.size === 0) continue;
      const cur = view.fieldsOf('cur')[f] ?? '';
      const sc = m.get(cur);
      if (sc) for (const w of sc) out.push(w);
      if (view.ev.prevObject) {
        const prev = view.fieldsOf('prev')[f] ?? '';
        if (prev !== cur) {
          const sp = m.get(prev);
          if (sp) for (const w of sp) out.push(w);
        }
      }
    }
    return out;
  }

  /**
   * `dispatchEvent`: the multicasts one committed write produces. Table bodies are printed at
   * `nowUs` with `clock`.
   */
  dispatch(ev: StorageEvent, resource: string, nowUs: VirtualTime, clock: Clock): WatchDelivery[] {
    const view = new EventView(ev, resource);
    // (type, format) groups in order of their first watcher: recipients (client → matched ids)
    // with the event to send. A handful per event, so a list searched in order.
    const groups: Group[] = [];
    for (const w of this.candidates(view)) {
      const e = convertToWatchEvent(w, view);
      if (!e) continue;
      const fk = formatKey(w);
      let g: Group | undefined;
      for (const x of groups) {
        if (x.type === e.type && x.format === fk) {
          g = x;
          break;
        }
      }
      if (!g) groups.push((g = { type: e.type, format: fk, object: e.object, sample: w, recipients: new Map() }));
      const ids = g.recipients.get(w.client);
      if (ids) ids.push(w.watchId);
      else g.recipients.set(w.client, [w.watchId]);
    }
    const out: WatchDelivery[] = [];
    for (const g of groups) {
      const object = g.sample.asTable ? this.render(g.sample, g.object, resource, nowUs, clock) : g.object;
      this.split(g.recipients, g.type, object, out);
    }
    return out;
  }

  /**
   * Builds the bodies for one group: a shared body for every recipient whose own watch ids do
   * not collide with the group's id set, and a private body for each recipient that would.
   */
  private split(recipients: Map<ActorId, string[]>, type: WatchEventType, object: unknown, into: WatchDelivery[]): void {
    const event = { type, object } as ApiWatchEvent['event'];
    if (recipients.size === 1) {
      // One recipient: its ids are the group's, nothing can collide.
      for (const [client, ids] of recipients) into.push({ to: [client], body: { type: 'ApiWatchEvent', watchIds: ids, event } });
      return;
    }
    const idSet = new Set<string>();
    for (const ids of recipients.values()) for (const id of ids) idSet.add(id);
    const shared: ActorId[] = [];
    const sharedIds: string[] = [];
    const out: WatchDelivery[] = [];
    for (const [client, ids] of recipients) {
      let collides = false;
      for (const id of this.byClient.get(client)?.keys() ?? []) {
        if (idSet.has(id) && !ids.includes(id)) {
          collides = true;
          break;
        }
      }
      if (collides) {
        out.push({ to: [client], body: { type: 'ApiWatchEvent', watchIds: ids, event } });
      } else {
        shared.push(client);
        for (const id of ids) if (!sharedIds.includes(id)) sharedIds.push(id);
      }
    }
    if (shared.length) into.push({ to: shared, body: { type: 'ApiWatchEvent', watchIds: sharedIds, event } });
    for (const d of out) into.push(d);
  }

  private render(w: Watcher, obj: KubeObject, resource: string, nowUs: VirtualTime, clock: Clock): unknown {
    return toTable(resource, [obj], obj.metadata.resourceVersion ?? '', nowUs, clock, { wide: w.wide, includeObject: w.includeObject });
  }

  /** Does `obj` (current state) match `w`? Used for the initial ADDED events. */
  matchesObject(w: Watcher, key: string, obj: KubeObject): boolean {
    if (!key.startsWith(w.keyPrefix)) return false;
    if (!labelsMatch(w.label, obj.metadata.labels)) return false;
    return w.fields.terms.length === 0 || fieldsMatch(w.fields, selectableFields(w.resource, obj));
  }

  /** A single-watcher event body (initial ADDED, history replay). */
  bodyFor(w: Watcher, type: WatchEventType, obj: KubeObject, nowUs: VirtualTime, clock: Clock): ApiWatchEvent {
    const object = w.asTable ? this.render(w, obj, w.resource, nowUs, clock) : obj;
    return { type: 'ApiWatchEvent', watchIds: [w.watchId], event: { type, object } as ApiWatchEvent['event'] };
  }

  /** History replay for one watcher: the events it would have seen after its resourceVersion. */
  replay(w: Watcher, events: readonly StorageEvent[], nowUs: VirtualTime, clock: Clock): ApiWatchEvent[] {
    const out: ApiWatchEvent[] = [];
    for (const ev of events) {
      const e = convertToWatchEvent(w, new EventView(ev, w.resource));
      if (e) out.push(this.bodyFor(w, e.type, e.object, nowUs, clock));
    }
    return out;
  }

  /** An ERROR event (e.g. 410 Expired) for one watcher. */
  errorFor(w: Pick<Watcher, 'watchId'>, status: Status): ApiWatchEvent {
    return { type: 'ApiWatchEvent', watchIds: [w.watchId], event: { type: 'ERROR', object: status } };
  }
}
