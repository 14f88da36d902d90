/**
 * `ControllerExpectations` / `UIDTrackingControllerExpectations` (kubernetes
 * `pkg/controller/controller_utils.go`): a ReplicaSet that just asked for N creations or for the
 * deletion of pods P does not sync its replicas again until the informer has observed them (or
 * `ExpectationsTimeout` = 5 min passed), so a stale cache cannot cause double creates/deletes.
 */
import type { VirtualTime } from '@podsim/api';
import { seconds } from '@podsim/api';

/** `ExpectationsTimeout`. */
export const EXPECTATIONS_TIMEOUT_US = seconds(5 * 60);

interface Expectee {
  add: number;
  del: number;
  timestamp: VirtualTime;
}

export class UIDTrackingControllerExpectations {
  private readonly exp = new Map<string, Expectee>();
  private readonly uids = new Map<string, Set<string>>();

  /** `SatisfiedExpectations`: no record, all observed, or the record expired. */
  satisfiedExpectations(key: string, now: VirtualTime): boolean {
    const e = this.exp.get(key);
    if (!e) return true;
    if (e.add <= 0 && e.del <= 0) return true;
    return now - e.timestamp > EXPECTATIONS_TIMEOUT_US;
  }

  /** `ExpectCreations`: replaces the record with `adds` pending creations. */
  expectCreations(key: string, adds: number, now: VirtualTime): void {
    this.exp.set(key, { add: adds, del: 0, timestamp: now });
  }

  /** `ExpectDeletions`: records the pod keys whose deletion must be observed. */
  expectDeletions(key: string, podKeys: readonly string[], now: VirtualTime): void {
    this.uids.set(key, new Set(podKeys));
    this.exp.set(key, { add: 0, del: podKeys.length, timestamp: now });
  }

  /** `SetExpectations(add, del)` with the pods to delete named (the DaemonSet controller's syncNodes). */
  setExpectations(key: string, adds: number, podKeys: readonly string[], now: VirtualTime): void {
    this.uids.set(key, new Set(podKeys));
    this.exp.set(key, { add: adds, del: podKeys.length, timestamp: now });
  }

  /** `CreationObserved`. */
  creationObserved(key: string): void {
    const e = this.exp.get(key);
    if (e) e.add--;
  }

  /** `DeletionObserved`: lowers the count only for a pod that was expected. */
  deletionObserved(key: string, podKey: string): void {
    const set = this.uids.get(key);
    if (set && set.has(podKey)) {
      set.delete(podKey);
      const e = this.exp.get(key);
      if (e) e.del--;
    }
  }

  /** `DeleteExpectations`. */
  deleteExpectations(key: string): void {
    this.exp.delete(key);
    this.uids.delete(key);
  }

  /** The pending (add, del) counts, for tests. */
  get(key: string): { add: number; del: number } | undefined {
    const e = this.exp.get(key);
    return e ? { add: e.add, del: e.del } : undefined;
  }
}
