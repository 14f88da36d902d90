/**
 * The driver's pod cache: what a client-go informer on pods (client-go `tools/cache` reflector +
 * store) would hold, fed by `ApiWatchEvent`s. `kubectl wait` conditions are evaluated against
 * it (kubectl v0.22.8 `pkg/cmd/wait`: `IsDeleted`, `condition=Ready`), so `wait` reacts at the
 * virtual instant the apiserver's event arrives, without polling.
 */
import type { Pod, WatchEvent, KubeObject } from '@podsim/api';
import { labelsMatch, type ParsedLabelSelector } from '@podsim/api';
import type { WaitCondition } from './steps.js';

export class PodInformer {
  private readonly byUid = new Map<string, Pod>();
  /** Position of each cached pod's first ADDED event: the apiserver's order of creation. */
  private readonly addedSeq = new Map<string, number>();
  private seq = 0;
  /** Highest resourceVersion seen in an event (the informer is at least this fresh). */
  rv = 0;

  /** Applies one watch event (ADDED / MODIFIED / DELETED); BOOKMARK and ERROR are ignored here. */
  apply(event: WatchEvent<KubeObject>): void {
    const pod = event.object as Pod;
    const rv = Number(pod.metadata?.resourceVersion);
    if (rv > this.rv) this.rv = rv;
    const uid = pod.metadata?.uid;
    if (!uid) return;
    if (event.type === 'DELETED') {
      this.byUid.delete(uid);
      this.addedSeq.delete(uid);
    } else if (event.type === 'ADDED' || event.type === 'MODIFIED') {
      this.byUid.set(uid, pod);
      if (!this.addedSeq.has(uid)) this.addedSeq.set(uid, this.seq++);
    }
  }

  /** Forgets everything (before a relist after a 410 Gone). */
  clear(): void {
    this.byUid.clear();
    this.addedSeq.clear();
    this.rv = 0;
  }

  /**
   * `pods` oldest first: in the order the informer saw them created (the order `expect.pods`
   * aliases bind in), pods it has not seen yet last, ties by name. Returns a new array.
   */
  oldestFirst<T extends KubeObject>(pods: readonly T[]): T[] {
    const seqOf = (p: T) => this.addedSeq.get(p.metadata.uid ?? '') ?? Infinity;
    return [...pods].sort((a, b) => seqOf(a) - seqOf(b) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  }

  has(uid: string): boolean {
    return this.byUid.has(uid);
  }

  /** Pods matching namespace (undefined = any), name and selector, in UID-insertion order. */
  select(namespace: string | undefined, name: string | undefined, selector: ParsedLabelSelector | undefined): Pod[] {
    const out: Pod[] = [];
    for (const p of this.byUid.values()) {
      if (namespace !== undefined && p.metadata.namespace !== namespace) continue;
      if (name !== undefined && p.metadata.name !== name) continue;
      if (selector && !labelsMatch(selector, p.metadata.labels)) continue;
      out.push(p);
    }
    return out;
  }
}

/** A pod is Running when its phase is Running and at least one container is running. */
export function podIsRunning(p: Pod): boolean {
  return p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).some((c) => c.state?.running !== undefined);
}

/** `condition=Ready`: the PodReady condition is True. */
export function podIsReady(p: Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Evaluates a wait condition on the current matches. `gone` is judged by the caller against the
 * UIDs that matched when the wait began (kubectl waits for those UIDs, not for the name).
 */
export function conditionHolds(condition: Exclude<WaitCondition, 'gone'>, matches: readonly Pod[], count: number): boolean {
  switch (condition) {
    case 'exists':
      return matches.length >= count;
    case 'terminating':
      return matches.length >= count && matches.every((p) => p.metadata.deletionTimestamp !== undefined);
    case 'running':
    case 'ready': {
      const live = matches.filter((p) => p.metadata.deletionTimestamp === undefined);
      const ok = condition === 'running' ? podIsRunning : podIsReady;
      return live.length >= count && live.every(ok);
    }
  }
}
