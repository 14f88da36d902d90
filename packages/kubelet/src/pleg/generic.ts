/**
 * The generic PLEG: `pkg/kubelet/pleg/generic.go` `GenericPLEG.relist` (spec §11.2). Every
 * `plegRelistPeriod` (1 s, measured from the end of the previous relist, like wait.Until) it
 * lists all sandboxes and containers, compares each container's state (sandboxes count as
 * containers) with the previous relist, re-inspects pods with events (`GetPodStatus`), stores
 * them in the {@link PodCache} stamped with the relist's start time, emits the events, and then
 * `UpdateTime`s the cache, which releases `GetNewerThan` waiters.
 */
import type { cri } from '@podsim/api';
import type { KubeletEnv } from '../env.js';
import { KUBERNETES_POD_NAME_LABEL, KUBERNETES_POD_NAMESPACE_LABEL, KUBERNETES_POD_UID_LABEL, type RuntimePod, type RuntimePodStatus } from '../container.js';
import { getPodStatus, join } from '../kuberuntime/runtimeStatus.js';
import type { PodCache } from './podCache.js';

export type PodLifeCycleEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'PodSync' | 'ContainerChanged';

/** `PodLifecycleEvent`: `data` is the container (or sandbox) id. */
export interface PodLifecycleEvent {
  readonly id: string;
  readonly type: PodLifeCycleEventType;
  readonly data: string;
}

/** `plegContainerState`. */
type PlegState = 'running' | 'exited' | 'unknown' | 'non-existent';

/**
 * One pod as the last relist saw it: its sandboxes then its containers, in list order, with
 * their states (`podRecord.old`/`current` of upstream, as parallel arrays). The record lives as
 * long as the runtime has the pod; each relist fills the `next*` scratch arrays and swaps them in,
 * so an unchanged pod costs no allocation.
 */
interface PodRecord {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  ids: string[];
  states: PlegState[];
  /** Container name for containers, '' for sandboxes; sandboxes come first. */
  names: string[];
  sandboxCount: number;
  nextIds: string[];
  nextStates: PlegState[];
  nextNames: string[];
  nextCount: number;
  nextSandboxCount: number;
  /** Relist generation that last saw the pod. */
  gen: number;
  /**
   * Relist generation that found one of the pod's items new, changed (another object than the
   * previous list's) or gone: only such a pod's items and states are rebuilt and compared.
   */
  dirty: number;
}

const NO_EVENTS: PodLifecycleEvent[] = [];

function sandboxState(s: cri.PodSandboxState): PlegState {
  return s === 'SANDBOX_READY' ? 'running' : 'exited';
}
function containerState(s: cri.ContainerState): PlegState {
  switch (s) {
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    case 'CONTAINER_CREATED':
      return 'unknown';
    default:
      return 'unknown';
  }
}

/** `generateEvents`: the events for one container's old → new state. */
export function generateEvents(podId: string, cid: string, oldState: PlegState, newState: PlegState): PodLifecycleEvent[] {
  if (newState === oldState) return NO_EVENTS;
  switch (newState) {
    case 'running':
      return [{ id: podId, type: 'ContainerStarted', data: cid }];
    case 'exited':
      return [{ id: podId, type: 'ContainerDied', data: cid }];
    case 'unknown':
      return [{ id: podId, type: 'ContainerChanged', data: cid }];
    default:
      if (oldState === 'exited') return [{ id: podId, type: 'ContainerRemoved', data: cid }];
      return [
        { id: podId, type: 'ContainerDied', data: cid },
        { id: podId, type: 'ContainerRemoved', data: cid },
      ];
  }
}

export class GenericPLEG {
  private readonly records = new Map<string, PodRecord>();
  /** The pods of the last relist in order of first appearance (sandboxes, then containers). */
  private order: PodRecord[] = [];
  /**
   * The previous relist's lists and the record of each item (undefined: no pod UID label).
   * The runtime lists in creation order, so an item of this relist is usually at or just after
   * its position in the previous one: found there by id, its record is known without reading
   * its labels or the records map (an item's labels never change).
   */
  private prevSandboxes: readonly cri.PodSandbox[] = [];
  private prevSandboxRecs: (PodRecord | undefined)[] = [];
  private prevContainers: readonly cri.Container[] = [];
  private prevContainerRecs: (PodRecord | undefined)[] = [];
  /** The arrays of the relist before the previous one, refilled by the next (no allocation per relist). */
  private spareOrder: PodRecord[] = [];
  private spareSandboxRecs: (PodRecord | undefined)[] = [];
  private spareContainerRecs: (PodRecord | undefined)[] = [];
  private gen = 0;
  private timer: number | undefined;
  private stopped = false;
  /** Virtual µs of the last completed relist (health: `relistThreshold` 3 m). */
  lastRelistAt = -1;

  constructor(
    private readonly env: KubeletEnv,
    private readonly cache: PodCache,
    private readonly relistPeriodUs: number,
    private readonly onEvents: (events: PodLifecycleEvent[]) => void,
    /**
     * Runs once, when the first relist has listed the runtime and inspected its pods, before it
     * stores their statuses in the cache (which wakes waiting pod workers) and emits events.
     */
    private readonly onFirstRelist?: () => void,
    /**
     * Called for each pod whose items or states a relist may have changed (the pods it rebuilt
     * and the pods gone from the runtime), before its events: whether {@link runningPods} lists
     * a pod changes only then.
     */
    private readonly onPodChanged?: (uid: string) => void,
  ) {}

  start(): void {
    this.relist();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.env.cancelTimer(this.timer);
  }

  /**
   * Pods the runtime has with a running container or a ready sandbox (`GetPods(false)`, which
   * the kubelet's runtime cache serves to housekeeping), as of the last relist. With `want`,
   * only the pods whose UID it accepts (in the same order): housekeeping needs the few that no
   * pod worker owns, and building every node's 100 pods every 2 s was most of its cost.
   */
  runningPods(want?: (uid: string) => boolean): RuntimePod[] {
    const out: RuntimePod[] = [];
    for (const r of this.order) {
      if (want !== undefined && !want(r.uid)) continue;
      const containers: { id: string; name: string; state: 'running' }[] = [];
      const sandboxes: { id: string; state: cri.PodSandboxState }[] = [];
      for (let i = 0; i < r.ids.length; i++) {
        if (r.states[i] !== 'running') continue;
        if (i < r.sandboxCount) sandboxes.push({ id: r.ids[i], state: 'SANDBOX_READY' });
        else containers.push({ id: r.ids[i], name: r.names[i], state: 'running' });
      }
      if (containers.length > 0 || sandboxes.length > 0) out.push({ uid: r.uid, name: r.name, namespace: r.namespace, containers, sandboxes });
    }
    return out;
  }

  /** Does {@link runningPods} list the pod (a running container or a ready sandbox at the last relist)? */
  hasRunning(uid: string): boolean {
    const r = this.records.get(uid);
    if (r === undefined) return false;
    for (let i = 0; i < r.states.length; i++) if (r.states[i] === 'running') return true;
    return false;
  }

  /** Every pod UID the runtime had at the last relist (any state). */
  runtimePodUids(): IterableIterator<string> {
    return this.order.map((r) => r.uid).values();
  }

  /** `relist` (one pass). */
  relist(): void {
    const timestamp = this.env.now();
    let sandboxes: readonly cri.PodSandbox[] | undefined;
    let containers: readonly cri.Container[] | undefined;
    const listed = join(2, () => {
      if (sandboxes === undefined || containers === undefined) return this.scheduleNext(); // runtime error: try next period
      this.compare(timestamp, sandboxes, containers);
    });
    this.env.cri({ type: 'ListPodSandbox' }, (r) => {
      if (!r.error) sandboxes = r.items;
      listed();
    });
    this.env.cri({ type: 'ListContainers' }, (r) => {
      if (!r.error) containers = r.containers;
      listed();
    });
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    this.timer = this.env.setTimer(this.relistPeriodUs, () => {
      this.timer = undefined;
      this.relist();
    });
  }

  private compare(timestamp: number, sandboxes: readonly cri.PodSandbox[], containers: readonly cri.Container[]): void {
    if (sandboxes === this.prevSandboxes && containers === this.prevContainers && this.lastRelistAt >= 0) {
      // The very lists of the previous relist (the runtime's unchanged answer, an immutable body
      // shared within a thread): every pod keeps its items and states, so upstream's relist
      // finds no events and inspects nothing; what is left is its cache.UpdateTime.
      this.cache.updateTime(timestamp);
      this.lastRelistAt = timestamp;
      return this.scheduleNext();
    }
    const gen = ++this.gen;
    const order = this.spareOrder;
    order.length = 0;
    let created = 0;
    const rec = (labels: Record<string, string>): PodRecord | undefined => {
      const uid = labels[KUBERNETES_POD_UID_LABEL];
      if (uid === undefined) return undefined;
      let r = this.records.get(uid);
      if (!r) {
        r = {
          uid,
          name: labels[KUBERNETES_POD_NAME_LABEL] ?? '',
          namespace: labels[KUBERNETES_POD_NAMESPACE_LABEL] ?? '',
          ids: [],
          states: [],
          names: [],
          sandboxCount: 0,
          nextIds: [],
          nextStates: [],
          nextNames: [],
          nextCount: 0,
          nextSandboxCount: 0,
          gen: 0,
          dirty: 0,
        };
        this.records.set(uid, r);
        created++;
      }
      return touch(r);
    };
    const touch = (r: PodRecord): PodRecord => {
      if (r.gen !== gen) {
        r.gen = gen;
        r.nextCount = 0;
        r.nextSandboxCount = 0;
        order.push(r);
      }
      return r;
    };
    // Each listed item's pod record: the runtime lists in a stable order, so the record is found
    // at (or just after) the item's position in the previous relist's list, by id; else by labels.
    // An item that is the previous list's very object there (the runtime shares an item until its
    // state changes) leaves its pod as it was; any other item, and every item of the previous list
    // that is passed over, marks its pod dirty. A pod left clean has the same items in the same
    // order and states as at the previous relist, so its record is already what a rebuild gives.
    const recordsOf = (
      items: readonly { readonly id: string; readonly labels: Record<string, string> }[],
      prev: readonly { readonly id: string }[],
      prevRecs: readonly (PodRecord | undefined)[],
      out: (PodRecord | undefined)[],
    ) => {
      out.length = items.length;
      let j = 0;
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (j < prev.length && prev[j] === item) {
          const r = prevRecs[j++];
          out[i] = r && touch(r);
          continue;
        }
        const k = nearby(prev, j, item.id);
        let r: PodRecord | undefined;
        if (k < 0) r = rec(item.labels);
        else {
          for (; j < k; j++) markDirty(prevRecs[j], gen);
          j = k + 1;
          r = prevRecs[k];
          if (r) touch(r);
        }
        if (r) r.dirty = gen;
        out[i] = r;
      }
      for (; j < prev.length; j++) markDirty(prevRecs[j], gen);
      return out;
    };
    const sandboxRecs = recordsOf(sandboxes, this.prevSandboxes, this.prevSandboxRecs, this.spareSandboxRecs);
    const containerRecs = recordsOf(containers, this.prevContainers, this.prevContainerRecs, this.spareContainerRecs);
    // The dirty pods' items, in list order (sandboxes first).
    for (let i = 0; i < sandboxes.length; i++) {
      const r = sandboxRecs[i];
      if (!r || r.dirty !== gen) continue;
      setState(r, sandboxes[i].id, sandboxState(sandboxes[i].state), '');
      r.nextSandboxCount = r.nextCount;
    }
    for (let i = 0; i < containers.length; i++) {
      const r = containerRecs[i];
      if (!r || r.dirty !== gen) continue;
      const c = containers[i];
      setState(r, c.id, containerState(c.state), c.state === 'CONTAINER_RUNNING' ? (c.labels['io.kubernetes.container.name'] ?? c.metadata.name) : '');
    }
    this.spareSandboxRecs = this.prevSandboxRecs;
    this.spareContainerRecs = this.prevContainerRecs;
    this.prevSandboxes = sandboxes;
    this.prevSandboxRecs = sandboxRecs;
    this.prevContainers = containers;
    this.prevContainerRecs = containerRecs;
    // Events per pod, over the union of old and new pods: pods of this relist in order of first
    // appearance, then pods the previous relist had and this one does not.
    const eventPods: PodRecord[] = [];
    const eventLists: PodLifecycleEvent[][] = [];
    const add = (r: PodRecord, evs: PodLifecycleEvent[]) => {
      if (evs.length === 0) return;
      if (eventPods[eventPods.length - 1] === r) eventLists[eventLists.length - 1].push(...evs);
      else {
        eventPods.push(r);
        eventLists.push([...evs]);
      }
    };
    for (const r of order) {
      if (r.dirty !== gen) continue; // clean: the same items in the same states (nothing to emit)
      this.onPodChanged?.(r.uid);
      const n = r.nextCount;
      const oldN = r.ids.length;
      // A dirty pod may still have the same items in the same states (nothing to emit).
      let same = n === oldN;
      for (let i = 0; same && i < n; i++) same = r.nextIds[i] === r.ids[i] && r.nextStates[i] === r.states[i];
      if (!same) {
        for (let i = 0; i < n; i++) {
          const cid = r.nextIds[i];
          const j = indexOfPrefix(r.ids, oldN, cid);
          add(r, generateEvents(r.uid, cid, j < 0 ? 'non-existent' : r.states[j], r.nextStates[i]));
        }
        for (let j = 0; j < oldN; j++) {
          const cid = r.ids[j];
          if (indexOfPrefix(r.nextIds, n, cid) < 0) add(r, generateEvents(r.uid, cid, r.states[j], 'non-existent'));
        }
      }
      // Swap the scratch arrays in.
      const ids = r.ids;
      const states = r.states;
      const names = r.names;
      r.ids = r.nextIds;
      r.states = r.nextStates;
      r.names = r.nextNames;
      if (r.ids.length !== n) {
        r.ids.length = n;
        r.states.length = n;
        r.names.length = n;
      }
      r.sandboxCount = r.nextSandboxCount;
      r.nextIds = ids;
      r.nextStates = states;
      r.nextNames = names;
    }
    // Pods of the previous relist this one did not see (each record of this relist is one of
    // the previous relist's or was created by it).
    let gone: Set<string> | undefined;
    if (this.order.length > order.length - created) {
      gone = new Set<string>();
      for (const old of this.order) {
        if (old.gen === gen) continue;
        this.onPodChanged?.(old.uid);
        for (let j = 0; j < old.ids.length; j++) add(old, generateEvents(old.uid, old.ids[j], old.states[j], 'non-existent'));
        this.records.delete(old.uid);
        gone.add(old.uid);
      }
    }
    this.spareOrder = this.order;
    this.order = order;
    // updateCache for every pod with events (GetPodStatus in parallel), then emit and UpdateTime.
    const uids = eventPods.map((r) => r.uid);
    const statuses = new Map<string, RuntimePodStatus | string>();
    const inspected = join(uids.length, () => {
      // Before any cache.set: PodCache.set wakes the pod workers waiting in GetNewerThan at
      // once, and the first syncPod of each must already see what the kubelet restores from the
      // runtime at start-up (pod cgroups, which survive a restart; issue #27).
      if (this.lastRelistAt < 0) this.onFirstRelist?.();
      const all: PodLifecycleEvent[] = [];
      uids.forEach((uid, k) => {
        const st = statuses.get(uid);
        if (gone?.has(uid)) this.cache.delete(uid);
        else if (typeof st === 'object') this.cache.set(uid, st, timestamp);
        for (const e of eventLists[k]) if (e.type !== 'ContainerChanged') all.push(e);
      });
      this.cache.updateTime(timestamp);
      this.lastRelistAt = timestamp;
      if (all.length > 0) this.onEvents(all);
      this.scheduleNext();
    });
    for (const r of eventPods) {
      if (gone?.has(r.uid)) {
        // The pod is gone from the runtime: updateCache deletes it without asking.
        inspected();
        continue;
      }
      getPodStatus(this.env, r.uid, r.name, r.namespace, (st) => {
        statuses.set(r.uid, st);
        inspected();
      });
    }
  }
}

function markDirty(r: PodRecord | undefined, gen: number): void {
  if (r !== undefined) r.dirty = gen;
}

/** Records (id, state) as the next entry of the pod; a repeated id keeps its first position (a Map's set). */
function setState(r: PodRecord, id: string, state: PlegState, name: string): void {
  const i = indexOfPrefix(r.nextIds, r.nextCount, id);
  if (i >= 0) {
    r.nextStates[i] = state;
    r.nextNames[i] = name;
    return;
  }
  r.nextIds[r.nextCount] = id;
  r.nextStates[r.nextCount] = state;
  r.nextNames[r.nextCount] = name;
  r.nextCount++;
}

/** Index of the item with `id` among `items[from .. from + 4)`, or -1 (a bounded look-ahead over removed items). */
function nearby(items: readonly { readonly id: string }[], from: number, id: string): number {
  const end = Math.min(items.length, from + 4);
  for (let k = from; k < end; k++) if (items[k].id === id) return k;
  return -1;
}

function indexOfPrefix(a: readonly string[], n: number, x: string): number {
  for (let i = 0; i < n; i++) if (a[i] === x) return i;
  return -1;
}
