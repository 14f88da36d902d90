/**
 * ReplicaSet status: `calculateStatus` and the ReplicaFailure condition helpers
 * (`pkg/controller/replicaset/replica_set_utils.go`). `status.replicas` counts only active pods
 * (spec §12, invariant 13): a Terminating pod is never counted.
 */
import type { ReplicaSet, ReplicaSetCondition, ReplicaSetStatus } from '@podsim/api';

/** `apps.ReplicaSetReplicaFailure`. */
export const REPLICA_FAILURE = 'ReplicaFailure';

/** Counts taken from the RS's active pods at the start of a sync. */
export interface ActivePodCounts {
  readonly replicas: number;
  readonly fullyLabeledReplicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
}

/** A failed manageReplicas: the reason is FailedCreate or FailedDelete. */
export interface ManageReplicasError {
  readonly reason: 'FailedCreate' | 'FailedDelete';
  readonly message: string;
}

export function getCondition(status: ReplicaSetStatus | undefined, type: string): ReplicaSetCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * `calculateStatus(rs, filteredPods, manageReplicasErr)`: the new status from the counts of the
 * pods listed at the start of the sync; a ReplicaFailure condition is added on a failed
 * create/delete and removed once manageReplicas succeeds. `now` is an RFC 3339 timestamp.
 */
export function calculateStatus(
  rs: ReplicaSet,
  counts: ActivePodCounts,
  manageReplicasErr: ManageReplicasError | undefined,
  now: string,
): ReplicaSetStatus {
  const old = (rs.status ?? { replicas: 0 }) as ReplicaSetStatus;
  let conditions = old.conditions;
  const failure = getCondition(old, REPLICA_FAILURE);
  if (manageReplicasErr && !failure) {
    conditions = [
      ...(conditions ?? []),
      { type: REPLICA_FAILURE, status: 'True', lastTransitionTime: now, reason: manageReplicasErr.reason, message: manageReplicasErr.message },
    ];
  } else if (!manageReplicasErr && failure) {
    conditions = (conditions ?? []).filter((c) => c.type !== REPLICA_FAILURE);
  }
  const status: ReplicaSetStatus = {
    replicas: counts.replicas,
    fullyLabeledReplicas: counts.fullyLabeledReplicas,
    readyReplicas: counts.readyReplicas,
    availableReplicas: counts.availableReplicas,
    observedGeneration: old.observedGeneration,
  };
  if (conditions && conditions.length > 0) status.conditions = conditions;
  return status;
}
