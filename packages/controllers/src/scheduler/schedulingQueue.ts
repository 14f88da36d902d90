/**
 * The scheduler's `PriorityQueue` (`pkg/scheduler/internal/queue/scheduling_queue.go`, v1.22):
 * activeQ (priority, then queue time), podBackoffQ (1 s doubling to 10 s by attempts) and
 * unschedulableQ (moved on cluster events, or after 60 s); `moveRequestCycle` sends a pod that
 * failed while a move happened during its cycle to backoff instead of unschedulable.
 */
import type { Pod, VirtualTime } from '@podsim/api';
import { deepEqual, seconds } from '@podsim/api';
import { MinHeap } from '@podsim/sim';

export const POD_INITIAL_BACKOFF_US = seconds(1);
export const POD_MAX_BACKOFF_US = seconds(10);
/** `unschedulableQTimeInterval`. */
export const UNSCHEDULABLE_Q_TIME_INTERVAL_US = seconds(60);
export const FLUSH_BACKOFF_Q_PERIOD_US = seconds(1);
export const FLUSH_UNSCHEDULABLE_Q_PERIOD_US = seconds(30);

/** `framework.QueuedPodInfo`. */
export interface QueuedPodInfo {
  pod: Pod;
  readonly uid: string;
  /** Last time the pod was added to the queue (or re-added after a failure), virtual µs. */
  timestamp: VirtualTime;
  attempts: number;
  readonly initialAttemptTimestamp: VirtualTime;
}

interface HeapEntry {
  readonly info: QueuedPodInfo;
  readonly key: number;
  readonly seq: number;
}

export interface QueueOptions {
  readonly podInitialBackoffUs?: number;
  readonly podMaxBackoffUs?: number;
}

/** `isPodUpdated`: anything but status, resourceVersion, generation and finalizers changed. */
export function isPodUpdated(oldPod: Pod, newPod: Pod): boolean {
  const strip = (p: Pod) => ({ ...p, status: undefined, metadata: { ...p.metadata, resourceVersion: undefined, generation: undefined, finalizers: undefined } });
  return !deepEqual(strip(oldPod), strip(newPod));
}

export class SchedulingQueue {
  private seq = 0;
  private readonly activeHeap: MinHeap<HeapEntry>;
  private readonly active = new Map<string, HeapEntry>();
  private readonly backoffHeap = new MinHeap<HeapEntry>((a, b) => a.key < b.key || (a.key === b.key && a.seq < b.seq));
  private readonly backoff = new Map<string, HeapEntry>();
  readonly unschedulable = new Map<string, QueuedPodInfo>();
  schedulingCycle = 0;
  private moveRequestCycle = -1;
  private readonly initialBackoffUs: number;
  private readonly maxBackoffUs: number;

  constructor(opts: QueueOptions = {}) {
    this.initialBackoffUs = opts.podInitialBackoffUs ?? POD_INITIAL_BACKOFF_US;
    this.maxBackoffUs = opts.podMaxBackoffUs ?? POD_MAX_BACKOFF_US;
    this.activeHeap = new MinHeap<HeapEntry>((a, b) => {
      const pa = a.info.pod.spec.priority ?? 0;
      const pb = b.info.pod.spec.priority ?? 0;
      if (pa !== pb) return pa > pb;
      if (a.key !== b.key) return a.key < b.key;
      return a.seq < b.seq;
    });
  }

  get activeLength(): number {
    return this.active.size;
  }

  get backoffLength(): number {
    return this.backoff.size;
  }

  has(uid: string): boolean {
    return this.active.has(uid) || this.backoff.has(uid) || this.unschedulable.has(uid);
  }

  private pushActive(info: QueuedPodInfo): void {
    const e = { info, key: info.timestamp, seq: this.seq++ };
    this.active.set(info.uid, e);
    this.activeHeap.push(e);
  }

  private pushBackoff(info: QueuedPodInfo): void {
    const e = { info, key: this.backoffTime(info), seq: this.seq++ };
    this.backoff.set(info.uid, e);
    this.backoffHeap.push(e);
  }

  /** `Add`: a new pending pod goes to activeQ. */
  add(pod: Pod, now: VirtualTime): void {
    const uid = pod.metadata.uid ?? '';
    if (this.active.has(uid)) {
      this.active.get(uid)!.info.pod = pod;
      return;
    }
    this.backoff.delete(uid);
    this.unschedulable.delete(uid);
    this.pushActive({ pod, uid, timestamp: now, attempts: 0, initialAttemptTimestamp: now });
  }

  /** `Update`. */
  update(oldPod: Pod | undefined, newPod: Pod, now: VirtualTime): void {
    const uid = newPod.metadata.uid ?? '';
    const a = this.active.get(uid);
    if (a) {
      a.info.pod = newPod;
      return;
    }
    const b = this.backoff.get(uid);
    if (b) {
      b.info.pod = newPod;
      return;
    }
    const u = this.unschedulable.get(uid);
    if (u) {
      u.pod = newPod;
      if (!oldPod || isPodUpdated(oldPod, newPod)) {
        this.unschedulable.delete(uid);
        if (this.isPodBackingOff(u, now)) this.pushBackoff(u);
        else this.pushActive(u);
      }
      return;
    }
    this.add(newPod, now);
  }

  /** `Delete`. */
  delete(uid: string): void {
    this.active.delete(uid);
    this.backoff.delete(uid);
    this.unschedulable.delete(uid);
  }

  /** `Pop`: the next pod to schedule (attempts and schedulingCycle incremented), or undefined. */
  pop(): QueuedPodInfo | undefined {
    for (;;) {
      const e = this.activeHeap.pop();
      if (!e) return undefined;
      if (this.active.get(e.info.uid) !== e) continue;
      this.active.delete(e.info.uid);
      e.info.attempts++;
      this.schedulingCycle++;
      return e.info;
    }
  }

  /** `calculateBackoffDuration`. */
  backoffDuration(info: QueuedPodInfo): number {
    let d = this.initialBackoffUs;
    for (let i = 1; i < info.attempts; i++) {
      d *= 2;
      if (d > this.maxBackoffUs) return this.maxBackoffUs;
    }
    return d;
  }

  private backoffTime(info: QueuedPodInfo): VirtualTime {
    return info.timestamp + this.backoffDuration(info);
  }

  isPodBackingOff(info: QueuedPodInfo, now: VirtualTime): boolean {
    return this.backoffTime(info) > now;
  }

  /** `AddUnschedulableIfNotPresent`: after a failed attempt. */
  addUnschedulableIfNotPresent(info: QueuedPodInfo, podSchedulingCycle: number, now: VirtualTime): void {
    if (this.has(info.uid)) return;
    info.timestamp = now;
    if (this.moveRequestCycle >= podSchedulingCycle) this.pushBackoff(info);
    else this.unschedulable.set(info.uid, info);
  }

  /** `MoveAllToActiveOrBackoffQueue`. Returns the number of pods moved. */
  moveAllToActiveOrBackoffQueue(now: VirtualTime): number {
    const n = this.movePods([...this.unschedulable.values()], now);
    this.moveRequestCycle = this.schedulingCycle;
    return n;
  }

  private movePods(infos: readonly QueuedPodInfo[], now: VirtualTime): number {
    for (const info of infos) {
      this.unschedulable.delete(info.uid);
      if (this.isPodBackingOff(info, now)) this.pushBackoff(info);
      else this.pushActive(info);
    }
    return infos.length;
  }

  /** `flushBackoffQCompleted`: pods whose backoff expired go to activeQ. */
  flushBackoffQCompleted(now: VirtualTime): number {
    let n = 0;
    for (;;) {
      const e = this.backoffHeap.peek();
      if (!e) break;
      if (this.backoff.get(e.info.uid) !== e) {
        this.backoffHeap.pop();
        continue;
      }
      if (e.key > now) break;
      this.backoffHeap.pop();
      this.backoff.delete(e.info.uid);
      this.pushActive(e.info);
      n++;
    }
    return n;
  }

  /** `flushUnschedulableQLeftover`: pods unschedulable for longer than 60 s are moved. */
  flushUnschedulableQLeftover(now: VirtualTime): number {
    const stale = [...this.unschedulable.values()].filter((i) => now - i.timestamp > UNSCHEDULABLE_Q_TIME_INTERVAL_US);
    if (stale.length === 0) return 0;
    const n = this.movePods(stale, now);
    this.moveRequestCycle = this.schedulingCycle;
    return n;
  }
}
