/**
 * Which pods a ReplicaSet deletes first: `getPodsToDelete` (`replica_set.go`) and
 * `ActivePodsWithRanks.Less` (`controller_utils.go`, v1.22 with PodDeletionCost and
 * LogarithmicScaleDown on): unscheduled, Pending < Unknown < Running, not ready, lower
 * deletion cost, more co-located related pods, more recently ready, more restarts, newer.
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

/** log2 bucket of the nanoseconds elapsed since `t` (`logarithmicRankDiff`'s per-time term). */
function bucket(t: VirtualTime, now: VirtualTime): number {
  const d = (now - t) * 1000;
  return d > 0 ? Math.floor(Math.log2(d)) : -1;
}

/** One pod and its rank (active related pods on the same node). */
export interface RankedPod {
  readonly pod: Pod;
  readonly rank: number;
}

/** Per-pod fields of `Less` that do not depend on `now`. */
interface Static {
  readonly unassigned: boolean;
  readonly phase: number;
  readonly ready: boolean;
  readonly cost: number;
  readonly readyT: VirtualTime | undefined;
  readonly restarts: number;
  readonly createdT: VirtualTime | undefined;
  readonly uid: string;
}

/** Pods are immutable, so their static fields are computed (and timestamps parsed) once. */
const staticCache = new WeakMap<Pod, Static>();

function staticOf(p: Pod, clock: TimeParser): Static {
  let st = staticCache.get(p);
  if (!st) {
    const ready = isPodReady(p);
    st = {
      unassigned: !p.spec.nodeName,
      phase: PHASE_ORDINAL[p.status?.phase ?? ''] ?? 0,
      ready,
      cost: podDeletionCost(p),
      readyT: ready ? podReadyTime(p, clock) : undefined,
      restarts: maxContainerRestarts(p),
      createdT: p.metadata.creationTimestamp ? clock.parse(p.metadata.creationTimestamp) : undefined,
      uid: p.metadata.uid ?? '',
    };
    staticCache.set(p, st);
  }
  return st;
}

/** The pods being ranked in one call, as parallel arrays (no per-comparison allocation). */
class Ranking {
  readonly st: Static[];
  readonly rank: Int32Array;
  readonly readyB: Int32Array;
  readonly createdB: Int32Array;

  constructor(
    readonly pods: readonly Pod[],
    ranks: ArrayLike<number>,
    now: VirtualTime,
    clock: TimeParser,
  ) {
    const n = pods.length;
    this.st = new Array(n);
    this.rank = new Int32Array(n);
    this.readyB = new Int32Array(n);
    this.createdB = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const st = staticOf(pods[i], clock);
      this.st[i] = st;
      this.rank[i] = ranks[i];
      this.readyB[i] = st.readyT === undefined ? 0 : bucket(st.readyT, now);
      this.createdB[i] = st.createdT === undefined ? 0 : bucket(st.createdT, now);
    }
  }

  /**
   * LogarithmicScaleDown comparison of two different times: an unknown (zero) time first, else
   * the smaller log2 bucket of (now − t) (the more recent), else the smaller UID.
   */
  private time(i: number, j: number, ti: VirtualTime | undefined, tj: VirtualTime | undefined, bi: number, bj: number): number {
    if (ti === undefined || tj === undefined) return ti === undefined ? -1 : 1;
    if (bi !== bj) return bi - bj;
    const ui = this.st[i].uid;
    const uj = this.st[j].uid;
    return ui < uj ? -1 : ui > uj ? 1 : 0;
  }

  /** `ActivePodsWithRanks.Less` as a comparator of indices (negative: `i` is deleted first). */
  compare(i: number, j: number): number {
    const a = this.st[i];
    const b = this.st[j];
    // 1. Unassigned < assigned.
    if (a.unassigned !== b.unassigned) return a.unassigned ? -1 : 1;
    // 2. Pending < Unknown < Running.
    if (a.phase !== b.phase) return a.phase - b.phase;
    // 3. Not ready < ready.
    if (a.ready !== b.ready) return a.ready ? 1 : -1;
    // 4. Lower pod-deletion-cost < higher.
    if (a.cost !== b.cost) return a.cost < b.cost ? -1 : 1;
    // 5. Doubled up (more related pods on the node) < not doubled up.
    if (this.rank[i] !== this.rank[j]) return this.rank[j] - this.rank[i];
    // 6. Ready for less time < more time (log2 buckets, UID on a tie).
    if (a.ready && b.ready && a.readyT !== b.readyT) return this.time(i, j, a.readyT, b.readyT, this.readyB[i], this.readyB[j]);
    // 7. More restarts < fewer.
    if (a.restarts !== b.restarts) return b.restarts - a.restarts;
    // 8. Newer < older (log2 buckets, UID on a tie); empty creation time first.
    if (a.createdT !== b.createdT) return this.time(i, j, a.createdT, b.createdT, this.createdB[i], this.createdB[j]);
    return 0;
  }
}

/** `ActivePodsWithRanks.Less(i, j)`; `now` is virtual µs. */
export function lessActivePodsWithRanks(a: RankedPod, b: RankedPod, now: VirtualTime, clock: TimeParser): boolean {
  return new Ranking([a.pod, b.pod], [a.rank, b.rank], now, clock).compare(0, 1) < 0;
}

/** `getPodsRankedByRelatedPodsOnSameNode`: rank = active related pods on the pod's node. */
export function rankPods(podsToRank: readonly Pod[], relatedPods: Iterable<Pod>): RankedPod[] {
  const ranks = nodeRanks(podsToRank, relatedPods);
  return podsToRank.map((pod, i) => ({ pod, rank: ranks[i] }));
}

function nodeRanks(podsToRank: readonly Pod[], relatedPods: Iterable<Pod>): Int32Array {
  const onNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (!isPodActive(p)) continue;
    const n = p.spec.nodeName ?? '';
    onNode.set(n, (onNode.get(n) ?? 0) + 1);
  }
  const ranks = new Int32Array(podsToRank.length);
  podsToRank.forEach((pod, i) => (ranks[i] = onNode.get(pod.spec.nodeName ?? '') ?? 0));
  return ranks;
}

/**
 * `getPodsToDelete(filteredPods, relatedPods, diff)`: the first `diff` pods by the ranking (no
 * ranking when all are deleted). Upstream sorts every pod; selecting the `diff` smallest with a
 * bounded heap (ties by input order, as a stable sort) gives the same pods in O(n log diff),
 * which matters when a 100k-pod ReplicaSet is scaled down 500 pods per sync.
 */
export function getPodsToDelete(filteredPods: readonly Pod[], relatedPods: Iterable<Pod>, diff: number, now: VirtualTime, clock: TimeParser): Pod[] {
  if (diff >= filteredPods.length) return filteredPods.slice(0, diff);
  return selectPodsToDelete(filteredPods, nodeRanks(filteredPods, relatedPods), diff, now, clock);
}

/**
 * `getPodsToDelete` with the related pods given as active-pod counts per node name (what the
 * ReplicaSet controller keeps incrementally), so no pass over the related pods is needed.
 */
export function getPodsToDeleteByNodeCounts(filteredPods: readonly Pod[], perNode: ReadonlyMap<string, number>, diff: number, now: VirtualTime, clock: TimeParser): Pod[] {
  if (diff >= filteredPods.length) return filteredPods.slice(0, diff);
  const ranks = new Int32Array(filteredPods.length);
  for (let i = 0; i < filteredPods.length; i++) ranks[i] = perNode.get(filteredPods[i].spec.nodeName ?? '') ?? 0;
  return selectPodsToDelete(filteredPods, ranks, diff, now, clock);
}

/** The `diff` smallest pods by `Less` (bounded max-heap; ties by input order). */
function selectPodsToDelete(filteredPods: readonly Pod[], ranks: Int32Array, diff: number, now: VirtualTime, clock: TimeParser): Pod[] {
  if (diff <= 0) return [];
  const r = new Ranking(filteredPods, ranks, now, clock);
  const cmp = (i: number, j: number) => r.compare(i, j) || i - j;
  // Max-heap (worst on top) of the indices of the `diff` best pods so far.
  const heap = new Int32Array(diff);
  let size = 0;
  const swap = (a: number, b: number) => {
    const t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const rr = l + 1;
      let m = i;
      if (l < size && cmp(heap[l], heap[m]) > 0) m = l;
      if (rr < size && cmp(heap[rr], heap[m]) > 0) m = rr;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (let k = 0; k < filteredPods.length; k++) {
    if (size < diff) {
      heap[size] = k;
      let i = size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (cmp(heap[i], heap[p]) <= 0) break;
        swap(i, p);
        i = p;
      }
    } else if (cmp(k, heap[0]) < 0) {
      heap[0] = k;
      down(0);
    }
  }
  return Array.from(heap)
    .sort(cmp)
    .map((k) => filteredPods[k]);
}
