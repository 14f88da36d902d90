/**
 * `controller.ActivePods` (`pkg/controller/controller_utils.go`, v1.22): the order in which the
 * Job and DaemonSet controllers pick pods to delete (sorted ascending, the first are deleted
 * first): unassigned before assigned, Pending < Unknown < Running, not ready before ready, ready
 * for less time first, more restarts first, newer first. Without the ReplicaSet's ranks and
 * deletion cost (that is `ActivePodsWithRanks`, replicaset/podsToDelete.ts).
 */
import type { Clock, Pod } from '@podsim/api';
import { isPodReady, maxContainerRestarts, podReadyTime } from './podutil.js';

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** `ActivePods.Less` as a comparator (negative: `a` is deleted before `b`). */
export function compareActivePods(a: Pod, b: Pod, clock: Pick<Clock, 'parse'>): number {
  const ua = !a.spec.nodeName;
  const ub = !b.spec.nodeName;
  if (ua !== ub) return ua ? -1 : 1;
  const pa = PHASE_ORDER[a.status?.phase ?? 'Pending'] ?? 0;
  const pb = PHASE_ORDER[b.status?.phase ?? 'Pending'] ?? 0;
  if (pa !== pb) return pa - pb;
  const ra = isPodReady(a);
  const rb = isPodReady(b);
  if (ra !== rb) return ra ? 1 : -1;
  if (ra && rb) {
    const ta = podReadyTime(a, clock);
    const tb = podReadyTime(b, clock);
    // afterOrZero: a zero time counts as the most recent.
    if (ta !== tb) return ta === undefined ? -1 : tb === undefined ? 1 : tb - ta;
  }
  const ca = maxContainerRestarts(a);
  const cb = maxContainerRestarts(b);
  if (ca !== cb) return cb - ca;
  const ka = a.metadata.creationTimestamp ?? '';
  const kb = b.metadata.creationTimestamp ?? '';
  if (ka !== kb) return ka > kb ? -1 : 1;
  return 0;
}

/** A stable ascending sort by {@link compareActivePods}. */
export function sortActivePods(pods: readonly Pod[], clock: Pick<Clock, 'parse'>): Pod[] {
  return [...pods].sort((a, b) => compareActivePods(a, b, clock));
}
