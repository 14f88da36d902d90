/**
 * Which pods a ReplicaSet deletes when it has too many: `getPodsToDelete` and
 * `getPodsRankedByRelatedPodsOnSameNode` (`pkg/controller/replicaset/replica_set.go`) and
 * `ActivePodsWithRanks.Less` (`pkg/controller/controller_utils.go`, v1.22 with PodDeletionCost and
 * LogarithmicScaleDown enabled, both beta/default-on in 1.22). Smaller sorts first = deleted
 * first: unscheduled < scheduled, Pending < Unknown < Running, not ready < ready, lower
 * pod-deletion-cost, more co-located related pods, more recently ready (log2 buckets), more
 * restarts, newer (log2 buckets; UID breaks ties).
 */
import type { Clock, Pod, VirtualTime } from '@podsim/api';

/** What the ranking needs of a Clock: RFC 3339 → virtual µs. */
export type TimeParser = Pick<Clock, 'parse'>;
import { isPodActive, isPodReady, maxContainerRestarts, podReadyTime } from '../podutil.js';

/** `controller.kubernetes.io/pod-deletion-cost`. */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** `GetDeletionCostFromPodAnnotations`: an int32, 0 when absent or invalid. */
export function podDeletionCost(p: Pod): number {
  const v = p.metadata.annotations?.[POD_DELETION_COST];
  if (v === undefined || !/^[+-]?\d+$/.test(v.trim())) return 0;
  const n = Number(v);
  return n >= -2147483648 && n <= 2147483647 ? n : 0;
}

/** `logarithmicRankDiff(t1, t2, now)` on nanosecond durations, as upstream. */
function logarithmicRankDiff(t1: VirtualTime, t2: VirtualTime, now: VirtualTime): number {
  const d1 = (now - t1) * 1000;
  const d2 = (now - t2) * 1000;
  const r1 = d1 > 0 ? Math.floor(Math.log2(d1)) : -1;
  const r2 = d2 > 0 ? Math.floor(Math.log2(d2)) : -1;
  return r1 - r2;
}

/** `afterOrZero`: a zero (unknown) time sorts first; otherwise the later time first. */
function afterOrZero(t1: VirtualTime | undefined, t2: VirtualTime | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

/** Compare two times in LogarithmicScaleDown mode ("less" = the more recent one). */
function lessByTime(a: Pod, b: Pod, t1: VirtualTime | undefined, t2: VirtualTime | undefined, now: VirtualTime): boolean {
  if (t1 === undefined || t2 === undefined) return afterOrZero(t1, t2);
  const d = logarithmicRankDiff(t1, t2, now);
  if (d === 0) return (a.metadata.uid ?? '') < (b.metadata.uid ?? '');
  return d < 0;
}

/** One pod and its rank (active related pods on the same node). */
export interface RankedPod {
  readonly pod: Pod;
  readonly rank: number;
}

/** `ActivePodsWithRanks.Less(i, j)`; `now` is virtual µs. */
export function lessActivePodsWithRanks(a: RankedPod, b: RankedPod, now: VirtualTime, clock: TimeParser): boolean {
  const pa = a.pod;
  const pb = b.pod;
  const na = pa.spec.nodeName ?? '';
  const nb = pb.spec.nodeName ?? '';
  // 1. Unassigned < assigned.
  if (na !== nb && (na === '' || nb === '')) return na === '';
  // 2. Pending < Unknown < Running.
  const oa = PHASE_ORDINAL[pa.status?.phase ?? ''] ?? 0;
  const ob = PHASE_ORDINAL[pb.status?.phase ?? ''] ?? 0;
  if (oa !== ob) return oa < ob;
  // 3. Not ready < ready.
  const ra = isPodReady(pa);
  const rb = isPodReady(pb);
  if (ra !== rb) return !ra;
  // 4. Lower pod-deletion-cost < higher.
  const ca = podDeletionCost(pa);
  const cb = podDeletionCost(pb);
  if (ca !== cb) return ca < cb;
  // 5. Doubled up < not doubled up.
  if (a.rank !== b.rank) return a.rank > b.rank;
  // 6. Ready for less time < more time (log2 buckets).
  if (ra && rb) {
    const ta = podReadyTime(pa, clock);
    const tb = podReadyTime(pb, clock);
    if (ta !== tb) return lessByTime(pa, pb, ta, tb, now);
  }
  // 7. More restarts < fewer.
  const xa = maxContainerRestarts(pa);
  const xb = maxContainerRestarts(pb);
  if (xa !== xb) return xa > xb;
  // 8. Newer < older (log2 buckets); empty creation time first.
  const ta = pa.metadata.creationTimestamp ? clock.parse(pa.metadata.creationTimestamp) : undefined;
  const tb = pb.metadata.creationTimestamp ? clock.parse(pb.metadata.creationTimestamp) : undefined;
  if (ta !== tb) return lessByTime(pa, pb, ta, tb, now);
  return false;
}

/** `getPodsRankedByRelatedPodsOnSameNode`: rank = active related pods on the pod's node. */
export function rankPods(podsToRank: readonly Pod[], relatedPods: Iterable<Pod>): RankedPod[] {
  const onNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (!isPodActive(p)) continue;
    const n = p.spec.nodeName ?? '';
    onNode.set(n, (onNode.get(n) ?? 0) + 1);
  }
  return podsToRank.map((pod) => ({ pod, rank: onNode.get(pod.spec.nodeName ?? '') ?? 0 }));
}

/**
 * `getPodsToDelete(filteredPods, relatedPods, diff)`: the first `diff` pods by the ranking
 * (no sort when all are deleted). Timestamps are parsed once per pod, not per comparison.
 */
export function getPodsToDelete(filteredPods: readonly Pod[], relatedPods: Iterable<Pod>, diff: number, now: VirtualTime, clock: TimeParser): Pod[] {
  if (diff >= filteredPods.length) return filteredPods.slice(0, diff);
  const cache = new Map<string, VirtualTime | undefined>();
  const memo: TimeParser = {
    parse: (text: string) => {
      if (cache.has(text)) return cache.get(text);
      const v = clock.parse(text);
      cache.set(text, v);
      return v;
    },
  };
  const ranked = rankPods(filteredPods, relatedPods);
  ranked.sort((a, b) => (lessActivePodsWithRanks(a, b, now, memo) ? -1 : lessActivePodsWithRanks(b, a, now, memo) ? 1 : 0));
  return ranked.slice(0, diff).map((r) => r.pod);
}
