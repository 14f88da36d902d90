/**
 * Rollout progress (`pkg/controller/deployment/progress.go`, v1.22): `syncRolloutStatus` sets
 * Progressing (NewReplicaSetAvailable / ReplicaSetUpdated / ProgressDeadlineExceeded) and
 * ReplicaFailure, writes the status when it changed, and `requeueStuckDeployment` schedules a
 * check for when the progress deadline would pass.
 */
import type { Deployment, DeploymentCondition, ReplicaSet } from '@podsim/api';
import { seconds, US_PER_SECOND } from '@podsim/api';
import { isOk, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import { nowTimestamp } from '../env.js';
import { omitEmptyEqual, objectKey } from '../objects.js';
import type { DeploymentController } from './deploymentController.js';
import {
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  DEPLOYMENT_PROGRESSING,
  DEPLOYMENT_REPLICA_FAILURE,
  getDeploymentCondition,
  hasProgressDeadline,
  NEW_RS_AVAILABLE_REASON,
  newDeploymentCondition,
  removeDeploymentCondition,
  REPLICA_SET_UPDATED_REASON,
  setDeploymentCondition,
  TIMED_OUT_REASON,
  type DeploymentStatusFull,
} from './deploymentUtil.js';
import { calculateStatus, updateDeploymentStatus } from './sync.js';

/** `syncRolloutStatus`. */
export function* syncRolloutStatus(dc: DeploymentController, allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment): Sync<SyncError | undefined> {
  const now = nowTimestamp(dc.env);
  const newStatus = calculateStatus(allRSs, newRS, d, now);
  if (!hasProgressDeadline(d)) removeDeploymentCondition(newStatus, DEPLOYMENT_PROGRESSING);
  const currentCond = getDeploymentCondition(d.status, DEPLOYMENT_PROGRESSING);
  const isComplete = newStatus.replicas === newStatus.updatedReplicas && currentCond?.reason === NEW_RS_AVAILABLE_REASON;
  if (hasProgressDeadline(d) && !isComplete) {
    const rsName = newRS?.metadata.name;
    if (deploymentComplete(d, newStatus)) {
      const msg = rsName ? `ReplicaSet "${rsName}" has successfully progressed.` : `Deployment "${d.metadata.name}" has successfully progressed.`;
      setDeploymentCondition(newStatus, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', NEW_RS_AVAILABLE_REASON, msg, now));
    } else if (deploymentProgressing(d, newStatus)) {
      const msg = rsName ? `ReplicaSet "${rsName}" is progressing.` : `Deployment "${d.metadata.name}" is progressing.`;
      const cond = newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', REPLICA_SET_UPDATED_REASON, msg, now);
      // The Progressing condition is updated (lastUpdateTime) on every sign of progress.
      if (currentCond) {
        if (currentCond.status === 'True') cond.lastTransitionTime = currentCond.lastTransitionTime;
        removeDeploymentCondition(newStatus, DEPLOYMENT_PROGRESSING);
      }
      setDeploymentCondition(newStatus, cond);
    } else if (deploymentTimedOut(d, newStatus, dc.env.now, dc.env.clock)) {
      const msg = rsName ? `ReplicaSet "${rsName}" has timed out progressing.` : `Deployment "${d.metadata.name}" has timed out progressing.`;
      setDeploymentCondition(newStatus, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'False', TIMED_OUT_REASON, msg, now));
    }
  }
  const failure = getReplicaFailures(allRSs, newRS);
  if (failure) setDeploymentCondition(newStatus, failure);
  else removeDeploymentCondition(newStatus, DEPLOYMENT_REPLICA_FAILURE);

  if (omitEmptyEqual(d.status, newStatus)) {
    requeueStuckDeployment(dc, d, newStatus);
    return undefined;
  }
  const res = yield* updateDeploymentStatus({ ...d, status: newStatus });
  return isOk(res) ? undefined : syncErrorOf(res, 'update deployment status');
}

/** `getReplicaFailures`: the new RS's (else any RS's) ReplicaFailure=True condition. */
function getReplicaFailures(allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): DeploymentCondition | undefined {
  const failed = (rs: ReplicaSet | undefined) => (rs?.status as { conditions?: DeploymentCondition[] } | undefined)?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  const c = failed(newRS) ?? allRSs.map(failed).find((x) => x !== undefined);
  if (!c) return undefined;
  return { type: DEPLOYMENT_REPLICA_FAILURE, status: c.status, lastUpdateTime: c.lastTransitionTime, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: c.message };
}

/** `requeueStuckDeployment`: requeue for when the progress deadline would expire. */
export function requeueStuckDeployment(dc: DeploymentController, d: Deployment, newStatus: DeploymentStatusFull): void {
  const cur = getDeploymentCondition(d.status, DEPLOYMENT_PROGRESSING);
  if (!hasProgressDeadline(d) || !cur) return;
  if (deploymentComplete(d, newStatus) || cur.reason === TIMED_OUT_REASON) return;
  const last = cur.lastUpdateTime ? dc.env.clock.parse(cur.lastUpdateTime) : undefined;
  if (last === undefined) return;
  const after = last + (d.spec.progressDeadlineSeconds ?? 0) * US_PER_SECOND - dc.env.now;
  const key = objectKey(d);
  if (after < seconds(1)) dc.workers.queue.addRateLimited(key);
  else dc.workers.queue.addAfter(key, after + seconds(1));
}
