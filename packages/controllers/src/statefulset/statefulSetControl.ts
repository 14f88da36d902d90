/**
 * The decisions of one StatefulSet sync, as a pure function: kubernetes v1.22
 * `pkg/controller/statefulset/stateful_set_control.go` `updateStatefulSet` (status counting,
 * replicas/condemned split, placeholders, firstUnhealthyPod, the replica loop, the condemned
 * loop, the rolling-update loop) and `truncateHistory`. Upstream interleaves the decisions with
 * the API calls and returns at the first error; here {@link planStatefulSetUpdate} lists the
 * calls in order, each with the status change upstream makes once it succeeded, and the
 * controller ({@link StatefulSetController}) issues them one by one, stopping at the first
 * failure — the same calls in the same order.
 *
 * With StatefulSetMinReadySeconds off (1.22's default) no step waits for availability and
 * `availableReplicas` equals `readyReplicas`.
 */
import type { ControllerRevision, Pod, StatefulSet, StatefulSetStatus } from '@podsim/api';
import { CONTROLLER_REVISION_HASH_LABEL } from '@podsim/api';
import {
  allowsBurst,
  getOrdinal,
  getPodRevision,
  identityMatches,
  isCreated,
  isFailed,
  isHealthy,
  isRunningAndReady,
  isTerminating,
  newVersionedStatefulSetPod,
  slotAtCurrentRevision,
  storageMatches,
} from './statefulSetUtils.js';

/** A status change applied once the step succeeded (`status.Replicas++`, …). */
export interface StatusDelta {
  readonly replicas?: number;
  readonly currentReplicas?: number;
  readonly updatedReplicas?: number;
}

/** One API step of a sync, in upstream's order. */
export type StatefulSetStep =
  /** `RecreatingFailedPod` event, then DeleteStatefulPod of a Failed replica. */
  | { readonly op: 'deleteFailed'; readonly pod: Pod; readonly ordinal: number; readonly delta: StatusDelta }
  /** CreateStatefulPod (PVCs first) of a placeholder. */
  | { readonly op: 'create'; readonly pod: Pod; readonly ordinal: number; readonly delta: StatusDelta }
  /** UpdateStatefulPod: identity or storage do not match. */
  | { readonly op: 'update'; readonly pod: Pod; readonly ordinal: number; readonly delta: StatusDelta }
  /** Scale-down delete of a condemned pod (ordinal ≥ replicas). */
  | { readonly op: 'deleteCondemned'; readonly pod: Pod; readonly ordinal: number; readonly delta: StatusDelta }
  /** Rolling-update delete of a pod not at updateRevision (delta applied even on failure, as upstream). */
  | { readonly op: 'deleteForUpdate'; readonly pod: Pod; readonly ordinal: number; readonly delta: StatusDelta };

/** Why the plan stops where it does (for traces and tests). */
export type StopReason =
  | 'deleting' // the set has a deletionTimestamp: status only
  | 'created' // monotonic: one create per sync
  | 'waitTerminating' // monotonic: a replica is terminating
  | 'waitRunningAndReady' // monotonic: a replica is not Running and Ready
  | 'condemnedTerminating' // monotonic: the highest condemned pod is still terminating
  | 'condemnedUnhealthy' // monotonic: a condemned pod is unhealthy and not the first unhealthy one
  | 'deletedCondemned' // monotonic: one delete per sync
  | 'onDelete' // OnDelete: no update deletes
  | 'deletedForUpdate' // one update delete per sync
  | 'updateWaitHealthy' // the rolling update waits for an updated pod to be healthy
  | 'done';

export interface StatefulSetPlan {
  /** The status counted from the pods (before any step). */
  readonly status: StatefulSetStatus;
  readonly steps: readonly StatefulSetStep[];
  readonly stop: StopReason;
  /** `firstUnhealthyPod`'s name, if any. */
  readonly firstUnhealthy?: string;
}

/**
 * `updateStatefulSet(set, currentRevision, updateRevision, collisionCount, pods)`: `pods` are the
 * set's claimed pods (the informer's objects, terminating ones included). `currentSet` and
 * `updateSet` are the set with each revision applied.
 */
export function planStatefulSetUpdate(
  set: StatefulSet,
  currentSet: StatefulSet,
  updateSet: StatefulSet,
  currentRevision: ControllerRevision,
  updateRevision: ControllerRevision,
  collisionCount: number,
  pods: readonly Pod[],
): StatefulSetPlan {
  const cur = currentRevision.metadata.name ?? '';
  const upd = updateRevision.metadata.name ?? '';
  const status: StatefulSetStatus = {
    observedGeneration: set.metadata.generation,
    replicas: 0,
    readyReplicas: 0,
    currentReplicas: 0,
    updatedReplicas: 0,
    availableReplicas: 0,
    currentRevision: cur,
    updateRevision: upd,
    collisionCount,
  };
  const replicaCount = set.spec.replicas ?? 1;
  const replicas: (Pod | undefined)[] = new Array(replicaCount).fill(undefined);
  const condemned: Pod[] = [];
  for (const pod of pods) {
    status.replicas++;
    if (isRunningAndReady(pod)) status.readyReplicas! += 1;
    if (isCreated(pod) && !isTerminating(pod)) {
      if (getPodRevision(pod) === cur) status.currentReplicas! += 1;
      if (getPodRevision(pod) === upd) status.updatedReplicas! += 1;
    }
    const ord = getOrdinal(pod);
    if (ord >= 0 && ord < replicaCount) replicas[ord] = pod;
    else if (ord >= replicaCount) condemned.push(pod);
  }
  // With the MinReadySeconds gate off, every ready replica counts as available.
  status.availableReplicas = status.readyReplicas;
  // Placeholders: upstream builds a full pod for every empty slot; the loops below only read a
  // placeholder's name, revision label and (absent) phase, so the full pod is built only for the
  // slots a create step takes (the same pod upstream would POST).
  const slot = (ord: number): Pod => {
    const rev = slotAtCurrentRevision(currentSet, ord) ? cur : upd;
    return { metadata: { name: `${set.metadata.name}-${ord}`, namespace: set.metadata.namespace, labels: { [CONTROLLER_REVISION_HASH_LABEL]: rev } }, spec: { containers: [] } };
  };
  const reps: Pod[] = replicas.map((p, ord) => p ?? slot(ord));
  condemned.sort((a, b) => getOrdinal(a) - getOrdinal(b));

  let firstUnhealthy: Pod | undefined;
  for (const p of [...reps, ...condemned]) if (!firstUnhealthy && !isHealthy(p)) firstUnhealthy = p;
  const steps: StatefulSetStep[] = [];
  const done = (stop: StopReason): StatefulSetPlan => ({ status, steps, stop, ...(firstUnhealthy ? { firstUnhealthy: firstUnhealthy.metadata.name } : {}) });
  if (set.metadata.deletionTimestamp) return done('deleting');
  const monotonic = !allowsBurst(set);
  const revDelta = (pod: Pod, sign: number) => ({
    ...(getPodRevision(pod) === cur ? { currentReplicas: sign } : {}),
    ...(getPodRevision(pod) === upd ? { updatedReplicas: sign } : {}),
  });

  for (let i = 0; i < reps.length; i++) {
    if (isFailed(reps[i])) {
      steps.push({ op: 'deleteFailed', pod: reps[i], ordinal: i, delta: { ...revDelta(reps[i], -1), replicas: -1 } });
      reps[i] = slot(i);
    }
    if (!isCreated(reps[i])) {
      reps[i] = newVersionedStatefulSetPod(currentSet, updateSet, cur, upd, i);
      steps.push({ op: 'create', pod: reps[i], ordinal: i, delta: { ...revDelta(reps[i], 1), replicas: 1 } });
      if (monotonic) return done('created');
      continue;
    }
    if (isTerminating(reps[i]) && monotonic) return done('waitTerminating');
    if (!isRunningAndReady(reps[i]) && monotonic) return done('waitRunningAndReady');
    if (identityMatches(set, reps[i]) && storageMatches(set, reps[i])) continue;
    steps.push({ op: 'update', pod: reps[i], ordinal: i, delta: {} });
  }

  for (let t = condemned.length - 1; t >= 0; t--) {
    const p = condemned[t];
    if (isTerminating(p)) {
      if (monotonic) return done('condemnedTerminating');
      continue;
    }
    if (!isRunningAndReady(p) && monotonic && p !== firstUnhealthy) return done('condemnedUnhealthy');
    steps.push({ op: 'deleteCondemned', pod: p, ordinal: getOrdinal(p), delta: revDelta(p, -1) });
    if (monotonic) return done('deletedCondemned');
  }

  if (set.spec.updateStrategy?.type === 'OnDelete') return done('onDelete');
  const updateMin = set.spec.updateStrategy?.rollingUpdate ? (set.spec.updateStrategy.rollingUpdate.partition ?? 0) : 0;
  for (let t = reps.length - 1; t >= updateMin; t--) {
    if (getPodRevision(reps[t]) !== upd && !isTerminating(reps[t])) {
      steps.push({ op: 'deleteForUpdate', pod: reps[t], ordinal: t, delta: { currentReplicas: -1 } });
      return done('deletedForUpdate');
    }
    if (!isHealthy(reps[t])) return done('updateWaitHealthy');
  }
  return done('done');
}

/** Applies a step's status change (`status.Replicas++`, …). */
export function applyDelta(status: StatefulSetStatus, d: StatusDelta): void {
  status.replicas += d.replicas ?? 0;
  status.currentReplicas = (status.currentReplicas ?? 0) + (d.currentReplicas ?? 0);
  status.updatedReplicas = (status.updatedReplicas ?? 0) + (d.updatedReplicas ?? 0);
}

/**
 * `truncateHistory`: the revisions to delete — the oldest of those not current, not update and
 * not named by any pod's `controller-revision-hash`, beyond `revisionHistoryLimit` (default 10).
 * `revisions` sorted oldest first.
 */
export function revisionsToTruncate(set: StatefulSet, pods: readonly Pod[], revisions: readonly ControllerRevision[], current: string, update: string): ControllerRevision[] {
  const live = new Set([current, update, ...pods.map(getPodRevision)]);
  const history = revisions.filter((r) => !live.has(r.metadata.name ?? ''));
  const limit = set.spec.revisionHistoryLimit ?? 10;
  return history.length <= limit ? [] : history.slice(0, history.length - limit);
}
