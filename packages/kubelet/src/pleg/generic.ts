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

interface PodRecord {
  readonly name: string;
  readonly namespace: string;
  /** container/sandbox id → state */
  readonly states: Map<string, PlegState>;
  readonly running: RuntimePod;
}

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
  if (newState === oldState) return [];
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
  private records = new Map<string, PodRecord>();
  private timer: number | undefined;
  private stopped = false;
  /** Virtual µs of the last completed relist (health: `relistThreshold` 3 m). */
  lastRelistAt = -1;

  constructor(
    private readonly env: KubeletEnv,
    private readonly cache: PodCache,
    private readonly relistPeriodUs: number,
    private readonly onEvents: (events: PodLifecycleEvent[]) => void,
    /** Runs once, after the first relist stored its statuses and before it releases waiters. */
    private readonly onFirstRelist?: () => void,
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
   * the kubelet's runtime cache serves to housekeeping), as of the last relist.
   */
  runningPods(): RuntimePod[] {
    const out: RuntimePod[] = [];
    for (const r of this.records.values()) if (r.running.containers.length > 0 || r.running.sandboxes.length > 0) out.push(r.running);
    return out;
  }

  /** Every pod UID the runtime had at the last relist (any state). */
  runtimePodUids(): IterableIterator<string> {
    return this.records.keys();
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
    const next = new Map<string, PodRecord>();
    const rec = (labels: Record<string, string>): PodRecord | undefined => {
      const uid = labels[KUBERNETES_POD_UID_LABEL];
      if (uid === undefined) return undefined;
      let r = next.get(uid);
      if (!r) {
        const name = labels[KUBERNETES_POD_NAME_LABEL] ?? '';
        const namespace = labels[KUBERNETES_POD_NAMESPACE_LABEL] ?? '';
        r = { name, namespace, states: new Map(), running: { uid, name, namespace, containers: [], sandboxes: [] } };
        next.set(uid, r);
      }
      return r;
    };
    for (const sb of sandboxes) {
      const r = rec(sb.labels);
      if (!r) continue;
      r.states.set(sb.id, sandboxState(sb.state));
      if (sb.state === 'SANDBOX_READY') (r.running.sandboxes as { id: string; state: cri.PodSandboxState }[]).push({ id: sb.id, state: sb.state });
    }
    for (const c of containers) {
      const r = rec(c.labels);
      if (!r) continue;
      r.states.set(c.id, containerState(c.state));
      if (c.state === 'CONTAINER_RUNNING') {
        (r.running.containers as { id: string; name: string; state: 'running' }[]).push({ id: c.id, name: c.labels['io.kubernetes.container.name'] ?? c.metadata.name, state: 'running' });
      }
    }
    // Events per pod, over the union of old and new pods.
    const eventsByPod = new Map<string, PodLifecycleEvent[]>();
    const add = (uid: string, evs: PodLifecycleEvent[]) => {
      if (evs.length === 0) return;
      const l = eventsByPod.get(uid);
      if (l) l.push(...evs);
      else eventsByPod.set(uid, [...evs]);
    };
    for (const [uid, r] of next) {
      const old = this.records.get(uid);
      for (const [cid, st] of r.states) add(uid, generateEvents(uid, cid, old?.states.get(cid) ?? 'non-existent', st));
      if (old) for (const [cid, st] of old.states) if (!r.states.has(cid)) add(uid, generateEvents(uid, cid, st, 'non-existent'));
    }
    for (const [uid, old] of this.records) {
      if (next.has(uid)) continue;
      for (const [cid, st] of old.states) add(uid, generateEvents(uid, cid, st, 'non-existent'));
    }
    this.records = next;
    // updateCache for every pod with events (GetPodStatus in parallel), then emit and UpdateTime.
    const uids = [...eventsByPod.keys()];
    const statuses = new Map<string, RuntimePodStatus | string>();
    const inspected = join(uids.length, () => {
      const all: PodLifecycleEvent[] = [];
      for (const uid of uids) {
        const s = statuses.get(uid);
        if (!next.has(uid)) this.cache.delete(uid);
        else if (typeof s === 'object') this.cache.set(uid, s, timestamp);
        for (const e of eventsByPod.get(uid)!) if (e.type !== 'ContainerChanged') all.push(e);
      }
      if (this.lastRelistAt < 0) this.onFirstRelist?.();
      this.cache.updateTime(timestamp);
      this.lastRelistAt = timestamp;
      if (all.length > 0) this.onEvents(all);
      this.scheduleNext();
    });
    for (const uid of uids) {
      const r = next.get(uid);
      if (r === undefined) {
        // The pod is gone from the runtime: updateCache deletes it without asking.
        inspected();
        continue;
      }
      getPodStatus(this.env, uid, r.name, r.namespace, (s) => {
        statuses.set(uid, s);
        inspected();
      });
    }
  }
}
