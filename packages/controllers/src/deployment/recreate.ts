/**
 * Recreate (`pkg/controller/deployment/recreate.go`, v1.22): `rolloutRecreate` scales every old
 * RS to 0 and creates / scales up the new RS only once `oldPodsRunning` is false, i.e. no old RS
 * reports replicas and no pod of an old RS is in a non-terminal phase — a Terminating pod still
 * has phase Running (R8), so the new pods wait until the old ones are gone from the API (C15
 * part B). It governs rollouts only: a manually deleted pod is replaced by its RS at once (C15 A).
 */
import type { Deployment, Pod, ReplicaSet } from '@podsim/api';
import type { Sync, SyncError } from '../coroutine.js';
import type { DeploymentController } from './deploymentController.js';
import { deploymentComplete, dReplicas, filterActiveReplicaSets, getActualReplicaCountForReplicaSets } from './deploymentUtil.js';
import { syncRolloutStatus } from './progress.js';
import { cleanupDeployment, getAllReplicaSetsAndSyncRevision, scaleAll, scaleReplicaSetAndRecordEvent } from './sync.js';

/** Pods of the deployment grouped by the UID of the RS that controls them (`getPodMapForDeployment`). */
export type PodMap = ReadonlyMap<string, readonly Pod[]>;

/** `oldPodsRunning`: old RSs report replicas, or an old RS's pod is not Succeeded/Failed. */
export function oldPodsRunning(newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[], podMap: PodMap): boolean {
  if (getActualReplicaCountForReplicaSets(oldRSs) > 0) return true;
  for (const [rsUid, pods] of podMap) {
    if (newRS && newRS.metadata.uid === rsUid) continue;
    for (const p of pods) {
      const phase = p.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') continue;
      return true;
    }
  }
  return false;
}

/** `rolloutRecreate`. */
export function* rolloutRecreate(dc: DeploymentController, d: Deployment, rsList: readonly ReplicaSet[], podMap: PodMap): Sync<SyncError | undefined> {
  // Do not create the new RS before the old ones are down, so as not to scale up first.
  let all = yield* getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  if (all.err) return all.err;
  let newRS = all.newRS;
  let oldRSs = all.oldRSs;
  const activeOld = filterActiveReplicaSets(oldRSs);

  const down = yield* scaleAll(dc, activeOld, 0, d);
  if (down.err) return down.err;
  if (down.scaled) return yield* syncRolloutStatus(dc, [...oldRSs, newRS], newRS, d);

  if (oldPodsRunning(newRS, oldRSs, podMap)) return yield* syncRolloutStatus(dc, [...oldRSs, newRS], newRS, d);

  if (!newRS) {
    all = yield* getAllReplicaSetsAndSyncRevision(dc, d, rsList, true);
    if (all.err) return all.err;
    newRS = all.newRS;
    oldRSs = all.oldRSs;
  }
  if (newRS) {
    const up = yield* scaleReplicaSetAndRecordEvent(dc, newRS, dReplicas(d), d);
    if (up.err) return up.err;
  }
  if (deploymentComplete(d, d.status ?? {})) {
    const e = yield* cleanupDeployment(dc, oldRSs, d);
    if (e) return e;
  }
  return yield* syncRolloutStatus(dc, [...oldRSs, newRS], newRS, d);
}
