/**
 * RollingUpdate (`pkg/controller/deployment/rolling.go`, v1.22): `rolloutRolling` →
 * `reconcileNewReplicaSet` (scale the new RS up within replicas + maxSurge) or
 * `reconcileOldReplicaSets` (first `cleanupUnhealthyReplicas`, then
 * `scaleDownOldReplicaSetsForRollingUpdate` keeping replicas − maxUnavailable available).
 * All arithmetic is on ReplicaSet spec/status counts, as upstream: terminating pods are not
 * counted anywhere, so the number of pod *objects* can exceed replicas + maxSurge (C14).
 */
import type { Deployment, ReplicaSet } from '@podsim/api';
import type { Sync, SyncError } from '../coroutine.js';
import type { DeploymentController } from './deploymentController.js';
import { byCreationTimestamp } from '../objects.js';
import {
  deploymentComplete,
  dReplicas,
  filterActiveReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  maxUnavailable,
  newRSNewReplicas,
  rsReplicas,
} from './deploymentUtil.js';
import { syncRolloutStatus } from './progress.js';
import { cleanupDeployment, getAllReplicaSetsAndSyncRevision, scaleReplicaSetAndRecordEvent } from './sync.js';

/** `rolloutRolling`. */
export function* rolloutRolling(dc: DeploymentController, d: Deployment, rsList: readonly ReplicaSet[]): Sync<SyncError | undefined> {
  const all = yield* getAllReplicaSetsAndSyncRevision(dc, d, rsList, true);
  if (all.err) return all.err;
  const newRS = all.newRS!;
  const oldRSs = all.oldRSs;
  const allRSs = [...oldRSs, newRS];

  const up = yield* reconcileNewReplicaSet(dc, allRSs, newRS, d);
  if (up.err) return up.err;
  if (up.scaled) return yield* syncRolloutStatus(dc, allRSs, newRS, d);

  const down = yield* reconcileOldReplicaSets(dc, allRSs, filterActiveReplicaSets(oldRSs), newRS, d);
  if (down.err) return down.err;
  if (down.scaled) return yield* syncRolloutStatus(dc, allRSs, newRS, d);

  if (deploymentComplete(d, d.status ?? {})) {
    const e = yield* cleanupDeployment(dc, oldRSs, d);
    if (e) return e;
  }
  return yield* syncRolloutStatus(dc, allRSs, newRS, d);
}

/** `reconcileNewReplicaSet`. */
export function* reconcileNewReplicaSet(dc: DeploymentController, allRSs: readonly ReplicaSet[], newRS: ReplicaSet, d: Deployment): Sync<{ scaled: boolean; err?: SyncError }> {
  const replicas = dReplicas(d);
  if (rsReplicas(newRS) === replicas) return { scaled: false };
  if (rsReplicas(newRS) > replicas) {
    const r = yield* scaleReplicaSetAndRecordEvent(dc, newRS, replicas, d);
    return { scaled: r.scaled, err: r.err };
  }
  const count = newRSNewReplicas(d, allRSs, newRS);
  const r = yield* scaleReplicaSetAndRecordEvent(dc, newRS, count, d);
  return { scaled: r.scaled, err: r.err };
}

/** `reconcileOldReplicaSets`. */
export function* reconcileOldReplicaSets(
  dc: DeploymentController,
  allRSs: readonly ReplicaSet[],
  oldRSs: ReplicaSet[],
  newRS: ReplicaSet,
  d: Deployment,
): Sync<{ scaled: boolean; err?: SyncError }> {
  const oldPodsCount = getReplicaCountForReplicaSets(oldRSs);
  if (oldPodsCount === 0) return { scaled: false };
  const allPodsCount = getReplicaCountForReplicaSets(allRSs);
  const minAvailable = dReplicas(d) - maxUnavailable(d);
  const newRSUnavailable = rsReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = allPodsCount - minAvailable - newRSUnavailable;
  if (maxScaledDown <= 0) return { scaled: false };

  const cleanup = yield* cleanupUnhealthyReplicas(dc, oldRSs, d, maxScaledDown);
  if (cleanup.err) return { scaled: false, err: cleanup.err };
  const down = yield* scaleDownOldReplicaSetsForRollingUpdate(dc, [...cleanup.oldRSs, newRS], cleanup.oldRSs, d);
  if (down.err) return { scaled: false, err: down.err };
  return { scaled: cleanup.count + down.count > 0 };
}

/** `cleanupUnhealthyReplicas`: scales old RSs down by their unavailable pods first (oldest first). */
export function* cleanupUnhealthyReplicas(
  dc: DeploymentController,
  oldRSs: ReplicaSet[],
  d: Deployment,
  maxCleanupCount: number,
): Sync<{ oldRSs: ReplicaSet[]; count: number; err?: SyncError }> {
  const rss = [...oldRSs].sort(byCreationTimestamp);
  let total = 0;
  for (let i = 0; i < rss.length; i++) {
    const rs = rss[i];
    if (total >= maxCleanupCount) break;
    if (rsReplicas(rs) === 0) continue;
    const available = rs.status?.availableReplicas ?? 0;
    if (rsReplicas(rs) === available) continue;
    const scaleDown = Math.min(maxCleanupCount - total, rsReplicas(rs) - available);
    const newCount = rsReplicas(rs) - scaleDown;
    // A stale status (more available than spec) makes this negative; upstream returns an error.
    if (newCount > rsReplicas(rs)) {
      return {
        oldRSs: rss,
        count: total,
        err: { reason: 'Invalid', message: `when cleaning up unhealthy replicas, got invalid request to scale down ${rs.metadata.namespace}/${rs.metadata.name} ${rsReplicas(rs)} -> ${newCount}` },
      };
    }
    const r = yield* scaleReplicaSetAndRecordEvent(dc, rs, newCount, d);
    if (r.err) return { oldRSs: rss, count: total, err: r.err };
    total += scaleDown;
    rss[i] = r.rs;
  }
  return { oldRSs: rss, count: total };
}

/** `scaleDownOldReplicaSetsForRollingUpdate`: keeps replicas − maxUnavailable available. */
export function* scaleDownOldReplicaSetsForRollingUpdate(
  dc: DeploymentController,
  allRSs: readonly ReplicaSet[],
  oldRSs: readonly ReplicaSet[],
  d: Deployment,
): Sync<{ count: number; err?: SyncError }> {
  const minAvailable = dReplicas(d) - maxUnavailable(d);
  const availablePods = getAvailableReplicaCountForReplicaSets(allRSs);
  if (availablePods <= minAvailable) return { count: 0 };
  const rss = [...oldRSs].sort(byCreationTimestamp);
  let total = 0;
  const totalToScaleDown = availablePods - minAvailable;
  for (const rs of rss) {
    if (total >= totalToScaleDown) break;
    if (rsReplicas(rs) === 0) continue;
    const n = Math.min(rsReplicas(rs), totalToScaleDown - total);
    const r = yield* scaleReplicaSetAndRecordEvent(dc, rs, rsReplicas(rs) - n, d);
    if (r.err) return { count: total, err: r.err };
    total += n;
  }
  return { count: total };
}
