/**
 * The runtime pod cache: `pkg/kubelet/container/cache.go`. The PLEG stores each pod's
 * `PodStatus` with the time of the relist that observed it, and after every relist bumps the
 * global timestamp (`UpdateTime`). `GetNewerThan(uid, t)` blocks until the pod's entry or the
 * global timestamp is newer than t; here the blocked goroutine is a waiting callback.
 */
import { emptyPodStatus, type RuntimePodStatus } from '../container.js';

interface Data {
  readonly status: RuntimePodStatus;
  readonly modified: number;
}

export class PodCache {
  private readonly pods = new Map<string, Data>();
  /** Global timestamp: every entry is at least this fresh (`cache.timestamp`); -1 = never. */
  private timestamp = -1;
  private readonly waiters = new Map<string, { minTime: number; cb: (s: RuntimePodStatus) => void }[]>();

  /** `Get`: the cached status, or an empty one. */
  get(uid: string): RuntimePodStatus {
    return this.pods.get(uid)?.status ?? emptyPodStatus(uid);
  }

  has(uid: string): boolean {
    return this.pods.has(uid);
  }

  private newerThan(uid: string, minTime: number): RuntimePodStatus | undefined {
    const d = this.pods.get(uid);
    if (d && d.modified > minTime) return d.status;
    if (this.timestamp > minTime) return d?.status ?? emptyPodStatus(uid);
    return undefined;
  }

  /** `GetNewerThan`: calls `cb` now if fresh enough data exists, else when it arrives. */
  getNewerThan(uid: string, minTime: number, cb: (s: RuntimePodStatus) => void): void {
    const s = this.newerThan(uid, minTime);
    if (s !== undefined) {
      cb(s);
      return;
    }
    let list = this.waiters.get(uid);
    if (!list) this.waiters.set(uid, (list = []));
    list.push({ minTime, cb });
  }

  /** `Set`: stores a status observed at `timestamp` and wakes this pod's waiters. */
  set(uid: string, status: RuntimePodStatus, timestamp: number): void {
    this.pods.set(uid, { status, modified: timestamp });
    this.notify(uid);
  }

  /** `Delete`. */
  delete(uid: string): void {
    this.pods.delete(uid);
  }

  /** `UpdateTime`: the relist at `timestamp` completed; wakes every waiter it satisfies. */
  updateTime(timestamp: number): void {
    this.timestamp = timestamp;
    for (const uid of [...this.waiters.keys()]) this.notify(uid);
  }

  private notify(uid: string): void {
    const list = this.waiters.get(uid);
    if (!list) return;
    const keep: typeof list = [];
    const ready: { s: RuntimePodStatus; cb: (s: RuntimePodStatus) => void }[] = [];
    for (const w of list) {
      const s = this.newerThan(uid, w.minTime);
      if (s === undefined) keep.push(w);
      else ready.push({ s, cb: w.cb });
    }
    if (keep.length > 0) this.waiters.set(uid, keep);
    else this.waiters.delete(uid);
    for (const r of ready) r.cb(r.s);
  }
}
