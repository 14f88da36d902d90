/**
 * Deployment sync helpers (`pkg/controller/deployment/sync.go`, v1.22): `sync`,
 * `getAllReplicaSetsAndSyncRevision` / `getNewReplicaSet` (`<deployment>-<pod-template-hash>`),
 * proportional `scale`, `scaleReplicaSet`, `cleanupDeployment`, `calculateStatus`,
 * `syncDeploymentStatus`, `isScalingEvent`, `checkPausedConditions`. As upstream, the sync edits
 * its copy `d` without taking the written resourceVersion, so a later status write may 409.
 */
import type { ApiResult, Deployment, ReplicaSet } from '@podsim/api';
import { call, isAlreadyExists, isNotFound, isOk, objectOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import { nowTimestamp } from '../env.js';
import { deepCopy, getControllerOf, newControllerRef, omitEmptyEqual } from '../objects.js';
import type { DeploymentController } from './deploymentController.js';
import {
  byRevision,
  bySizeNewer,
  bySizeOlder,
  computeHash,
  copyForEdit,
  DEPLOYMENT_AVAILABLE,
  DEPLOYMENT_PROGRESSING,
  dReplicas,
  equalIgnoreHash,
  FAILED_RS_CREATE_REASON,
  filterActiveReplicaSets,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  FOUND_NEW_RS_REASON,
  getAvailableReplicaCountForReplicaSets,
  getActualReplicaCountForReplicaSets,
  getDeploymentCondition,
  getDesiredReplicasAnnotation,
  getProportion,
  getReadyReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  isRollingUpdate,
  isSaturated,
  maxRevision,
  maxSurge,
  maxUnavailable,
  MINIMUM_REPLICAS_AVAILABLE,
  MINIMUM_REPLICAS_UNAVAILABLE,
  NEW_REPLICA_SET_REASON,
  newDeploymentCondition,
  newRSNewReplicas,
  PAUSED_DEPLOY_REASON,
  POD_TEMPLATE_HASH_LABEL,
  replicasAnnotationsNeedUpdate,
  RESUMED_DEPLOY_REASON,
  rsReplicas,
  setDeploymentCondition,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  TIMED_OUT_REASON,
  type DeploymentStatusFull,
} from './deploymentUtil.js';

export interface AllReplicaSets {
  readonly newRS: ReplicaSet | undefined;
  readonly oldRSs: ReplicaSet[];
  readonly err?: SyncError;
}

/** PUT deployments/<name>/status with the (mutated) copy `d`. */
export function* updateDeploymentStatus(d: Deployment): Sync<ApiResult> {
  return yield* call({ type: 'ApiUpdate', resource: 'deployments', namespace: d.metadata.namespace, name: d.metadata.name ?? '', subresource: 'status', object: d });
}

/** `getAllReplicaSetsAndSyncRevision(d, rsList, createIfNotExisted)`. */
export function* getAllReplicaSetsAndSyncRevision(dc: DeploymentController, d: Deployment, rsList: readonly ReplicaSet[], create: boolean): Sync<AllReplicaSets> {
  const [, allOld] = findOldReplicaSets(d, rsList);
  const r = yield* getNewReplicaSet(dc, d, rsList, allOld, create);
  return { newRS: r.rs, oldRSs: allOld, err: r.err };
}

/**
 * `getNewReplicaSet`: syncs the existing new RS's annotations (and the deployment's revision), or
 * creates it when `create` is set. Returns the RS (undefined when absent and not created).
 */
export function* getNewReplicaSet(
  dc: DeploymentController,
  d: Deployment,
  rsList: readonly ReplicaSet[],
  oldRSs: readonly ReplicaSet[],
  create: boolean,
): Sync<{ rs?: ReplicaSet; err?: SyncError }> {
  const existing = findNewReplicaSet(d, rsList);
  const newRevision = maxRevision(oldRSs) + 1;
  const now = nowTimestamp(dc.env);
  if (existing) {
    const rsCopy = copyForEdit(existing);
    const annotationsUpdated = setNewReplicaSetAnnotations(d, rsCopy, newRevision, true);
    const minReadyNeedsUpdate = (rsCopy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
    if (annotationsUpdated || minReadyNeedsUpdate) {
      rsCopy.spec.minReadySeconds = d.spec.minReadySeconds;
      const res = yield* call({ type: 'ApiUpdate', resource: 'replicasets', namespace: rsCopy.metadata.namespace, name: rsCopy.metadata.name ?? '', object: rsCopy });
      if (!isOk(res)) return { err: syncErrorOf(res, 'update replicaset') };
      return { rs: objectOf<ReplicaSet>(res) };
    }
    let needsUpdate = setDeploymentRevision(d, rsCopy.metadata.annotations?.['deployment.kubernetes.io/revision']);
    const status = (d.status ??= {});
    if (hasProgressDeadline(d) && !getDeploymentCondition(status, DEPLOYMENT_PROGRESSING)) {
      setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', FOUND_NEW_RS_REASON, `Found new replica set "${rsCopy.metadata.name}"`, now));
      needsUpdate = true;
    }
    if (needsUpdate) {
      const res = yield* updateDeploymentStatus(d);
      if (!isOk(res)) return { err: syncErrorOf(res, 'update deployment status') };
    }
    return { rs: rsCopy };
  }
  if (!create) return {};

  const status = (d.status ??= {}) as DeploymentStatusFull;
  const template = deepCopy(d.spec.template);
  const hash = computeHash(template, status.collisionCount);
  template.metadata ??= {};
  template.metadata.labels = { ...(d.spec.template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const selector = deepCopy(d.spec.selector);
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const name = `${d.metadata.name}-${hash}`;
  const newRS: ReplicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: d.metadata.namespace,
      ownerReferences: [newControllerRef(d, 'apps/v1', 'Deployment')],
      labels: template.metadata.labels,
    },
    spec: { replicas: 0, minReadySeconds: d.spec.minReadySeconds, selector, template },
  };
  const replicasCount = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
  newRS.spec.replicas = replicasCount;
  setNewReplicaSetAnnotations(d, newRS, newRevision, false);

  let created: ReplicaSet;
  let alreadyExists = false;
  const res = yield* call({ type: 'ApiCreate', resource: 'replicasets', namespace: d.metadata.namespace, object: newRS });
  if (isOk(res)) {
    created = objectOf<ReplicaSet>(res);
  } else if (isAlreadyExists(res)) {
    alreadyExists = true;
    const rs = dc.rsInformer.get(`${d.metadata.namespace}/${name}`);
    if (!rs) return { err: syncErrorOf(res, 'create replicaset') };
    const ref = getControllerOf(rs);
    if (ref && ref.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, rs.spec.template)) {
      created = rs;
    } else {
      // A hash collision: bump collisionCount and retry on the next sync.
      status.collisionCount = (status.collisionCount ?? 0) + 1;
      yield* updateDeploymentStatus(d);
      return { err: syncErrorOf(res, 'create replicaset (hash collision)') };
    }
  } else {
    if (hasProgressDeadline(d)) {
      const msg = `Failed to create new replica set "${name}": ${syncErrorOf(res, 'create').message}`;
      setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'False', FAILED_RS_CREATE_REASON, msg, now));
      yield* updateDeploymentStatus(d);
    }
    dc.recorder.event(deploymentSubject(d), 'Warning', FAILED_RS_CREATE_REASON, `Failed to create new replica set "${name}": ${syncErrorOf(res, 'create').message}`);
    return { err: syncErrorOf(res, 'create replicaset') };
  }
  if (!alreadyExists && replicasCount > 0) {
    dc.recorder.event(deploymentSubject(d), 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name ?? ''} to ${replicasCount}`);
  }
  if (!alreadyExists) {
    dc.env.trace('controller.deployment.newRS', `${d.metadata.namespace}/${d.metadata.name} created replicaset ${created.metadata.name} (replicas ${replicasCount})`, {
      namespace: d.metadata.namespace,
      deployment: d.metadata.name,
      replicaset: created.metadata.name,
      replicas: replicasCount,
    });
  }
  let needsUpdate = setDeploymentRevision(d, String(newRevision));
  if (!alreadyExists && hasProgressDeadline(d)) {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'True', NEW_REPLICA_SET_REASON, `Created new replica set "${created.metadata.name}"`, now));
    needsUpdate = true;
  }
  if (needsUpdate) {
    const r = yield* updateDeploymentStatus(d);
    if (!isOk(r)) return { rs: created, err: syncErrorOf(r, 'update deployment status') };
  }
  return { rs: created };
}

/** `scaleReplicaSetAndRecordEvent`: no-op when already at `newScale`. */
export function* scaleReplicaSetAndRecordEvent(dc: DeploymentController, rs: ReplicaSet, newScale: number, d: Deployment): Sync<{ scaled: boolean; rs: ReplicaSet; err?: SyncError }> {
  if (rsReplicas(rs) === newScale) return { scaled: false, rs };
  return yield* scaleReplicaSet(dc, rs, newScale, d, rsReplicas(rs) < newScale ? 'up' : 'down');
}

/** The Deployment as an Event's involvedObject (informer objects may lack their TypeMeta). */
function deploymentSubject(d: Deployment) {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: d.metadata };
}

/** `scaleReplicaSet`: PUT the RS with the new size and the replica annotations. */
export function* scaleReplicaSet(dc: DeploymentController, rs: ReplicaSet, newScale: number, d: Deployment, op: string): Sync<{ scaled: boolean; rs: ReplicaSet; err?: SyncError }> {
  const sizeNeedsUpdate = rsReplicas(rs) !== newScale;
  const max = dReplicas(d) + maxSurge(d);
  const annotationsNeedUpdate = replicasAnnotationsNeedUpdate(rs, dReplicas(d), max);
  if (!sizeNeedsUpdate && !annotationsNeedUpdate) return { scaled: false, rs };
  const oldScale = rsReplicas(rs);
  const rsCopy = copyForEdit(rs);
  rsCopy.spec.replicas = newScale;
  setReplicasAnnotations(rsCopy, dReplicas(d), max);
  const res = yield* call({ type: 'ApiUpdate', resource: 'replicasets', namespace: rsCopy.metadata.namespace, name: rsCopy.metadata.name ?? '', object: rsCopy });
  if (!isOk(res)) return { scaled: false, rs, err: syncErrorOf(res, 'scale replicaset') };
  const updated = objectOf<ReplicaSet>(res);
  if (sizeNeedsUpdate) {
    dc.recorder.event(deploymentSubject(d), 'Normal', 'ScalingReplicaSet', `Scaled ${op} replica set ${rs.metadata.name ?? ''} to ${newScale}`);
    dc.env.trace('controller.deployment.scale', `${d.metadata.namespace}/${d.metadata.name} scaled ${op} replicaset ${rs.metadata.name} to ${newScale} from ${oldScale}`, {
      namespace: d.metadata.namespace,
      deployment: d.metadata.name,
      replicaset: rs.metadata.name,
      from: oldScale,
      to: newScale,
    });
  }
  return { scaled: sizeNeedsUpdate, rs: updated };
}

/** `sync`: scale (and for paused deployments clean up) without rolling out. */
export function* sync(dc: DeploymentController, d: Deployment, rsList: readonly ReplicaSet[]): Sync<SyncError | undefined> {
  const all = yield* getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  if (all.err) return all.err;
  const err = yield* scale(dc, d, all.newRS, all.oldRSs);
  if (err) return err;
  if (d.spec.paused) {
    const e = yield* cleanupDeployment(dc, all.oldRSs, d);
    if (e) return e;
  }
  return yield* syncDeploymentStatus(dc, [...all.oldRSs, all.newRS], all.newRS, d);
}

/** `scale`: the single active RS takes the new size; otherwise scale proportionally (rolling). */
export function* scale(dc: DeploymentController, d: Deployment, newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): Sync<SyncError | undefined> {
  const target = findActiveOrLatest(newRS, oldRSs);
  if (target) {
    if (rsReplicas(target) === dReplicas(d)) return undefined;
    const r = yield* scaleReplicaSetAndRecordEvent(dc, target, dReplicas(d), d);
    return r.err;
  }
  if (isSaturated(d, newRS)) {
    for (const old of filterActiveReplicaSets(oldRSs)) {
      const r = yield* scaleReplicaSetAndRecordEvent(dc, old, 0, d);
      if (r.err) return r.err;
    }
    return undefined;
  }
  if (!isRollingUpdate(d)) return undefined;
  const allRSs = filterActiveReplicaSets([...oldRSs, newRS]);
  const allReplicas = getReplicaCountForReplicaSets(allRSs);
  const allowedSize = dReplicas(d) > 0 ? dReplicas(d) + maxSurge(d) : 0;
  const toAdd = allowedSize - allReplicas;
  let op = '';
  if (toAdd > 0) {
    allRSs.sort(bySizeNewer);
    op = 'up';
  } else if (toAdd < 0) {
    allRSs.sort(bySizeOlder);
    op = 'down';
  }
  let added = 0;
  const nameToSize = new Map<string, number>();
  for (const rs of allRSs) {
    if (toAdd !== 0) {
      const p = getProportion(rs, d, toAdd, added, d.status?.replicas ?? 0);
      nameToSize.set(rs.metadata.name ?? '', rsReplicas(rs) + p);
      added += p;
    } else nameToSize.set(rs.metadata.name ?? '', rsReplicas(rs));
  }
  for (let i = 0; i < allRSs.length; i++) {
    const rs = allRSs[i];
    const name = rs.metadata.name ?? '';
    if (i === 0 && toAdd !== 0) nameToSize.set(name, Math.max(0, nameToSize.get(name)! + (toAdd - added)));
    const r = yield* scaleReplicaSet(dc, rs, nameToSize.get(name)!, d, op);
    if (r.err) return r.err;
  }
  return undefined;
}

/** `cleanupDeployment`: deletes the oldest fully scaled-down RSs beyond revisionHistoryLimit. */
export function* cleanupDeployment(dc: DeploymentController, oldRSs: readonly ReplicaSet[], d: Deployment): Sync<SyncError | undefined> {
  if (!hasRevisionHistoryLimit(d)) return undefined;
  const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = cleanable.length - (d.spec.revisionHistoryLimit ?? 0);
  if (diff <= 0) return undefined;
  cleanable.sort(byRevision);
  for (let i = 0; i < diff; i++) {
    const rs = cleanable[i];
    if ((rs.status?.replicas ?? 0) !== 0 || rsReplicas(rs) !== 0 || (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0) || rs.metadata.deletionTimestamp) continue;
    const res = yield* call({ type: 'ApiDelete', resource: 'replicasets', namespace: rs.metadata.namespace, name: rs.metadata.name ?? '', options: {} });
    dc.env.trace('controller.deployment.cleanup', `${d.metadata.namespace}/${d.metadata.name} deleted old replicaset ${rs.metadata.name}: ${res.code}`, {
      namespace: d.metadata.namespace,
      deployment: d.metadata.name,
      replicaset: rs.metadata.name,
      code: res.code,
    });
    if (!isOk(res) && !isNotFound(res)) return syncErrorOf(res, 'delete old replicaset');
  }
  return undefined;
}

/** `calculateStatus(allRSs, newRS, deployment)`; `now` is RFC 3339. */
export function calculateStatus(allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment, now: string): DeploymentStatusFull {
  const available = getAvailableReplicaCountForReplicaSets(allRSs);
  const total = getReplicaCountForReplicaSets(allRSs);
  const unavailable = Math.max(0, total - available);
  const old = (d.status ?? {}) as DeploymentStatusFull;
  const status: DeploymentStatusFull = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: getActualReplicaCountForReplicaSets(allRSs),
    updatedReplicas: getActualReplicaCountForReplicaSets([newRS]),
    readyReplicas: getReadyReplicaCountForReplicaSets(allRSs),
    availableReplicas: available,
    unavailableReplicas: unavailable,
  };
  if (old.collisionCount !== undefined) status.collisionCount = old.collisionCount;
  if (old.conditions) status.conditions = old.conditions.map((c) => ({ ...c }));
  if (available >= dReplicas(d) - maxUnavailable(d)) {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_AVAILABLE, 'True', MINIMUM_REPLICAS_AVAILABLE, 'Deployment has minimum availability.', now));
  } else {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_AVAILABLE, 'False', MINIMUM_REPLICAS_UNAVAILABLE, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

/** `syncDeploymentStatus`: writes the calculated status when it differs. */
export function* syncDeploymentStatus(dc: DeploymentController, allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment): Sync<SyncError | undefined> {
  const newStatus = calculateStatus(allRSs, newRS, d, nowTimestamp(dc.env));
  if (omitEmptyEqual(d.status, newStatus)) return undefined;
  const res = yield* updateDeploymentStatus({ ...d, status: newStatus });
  return isOk(res) ? undefined : syncErrorOf(res, 'update deployment status');
}

/** `isScalingEvent`: an active RS's desired-replicas annotation differs from spec.replicas. */
export function* isScalingEvent(dc: DeploymentController, d: Deployment, rsList: readonly ReplicaSet[]): Sync<{ scaling: boolean; err?: SyncError }> {
  const all = yield* getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  if (all.err) return { scaling: false, err: all.err };
  for (const rs of filterActiveReplicaSets([...all.oldRSs, all.newRS])) {
    const desired = getDesiredReplicasAnnotation(rs);
    if (desired === undefined) continue;
    if (desired !== dReplicas(d)) return { scaling: true };
  }
  return { scaling: false };
}

/** `checkPausedConditions`: Progressing=Unknown DeploymentPaused / DeploymentResumed. */
export function* checkPausedConditions(dc: DeploymentController, d: Deployment): Sync<SyncError | undefined> {
  if (!hasProgressDeadline(d)) return undefined;
  const status = (d.status ??= {});
  const cond = getDeploymentCondition(status, DEPLOYMENT_PROGRESSING);
  if (cond && cond.reason === TIMED_OUT_REASON) return undefined;
  const pausedExists = cond?.reason === PAUSED_DEPLOY_REASON;
  const now = nowTimestamp(dc.env);
  let needsUpdate = false;
  if (d.spec.paused && !pausedExists) {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'Unknown', PAUSED_DEPLOY_REASON, 'Deployment is paused', now));
    needsUpdate = true;
  } else if (!d.spec.paused && pausedExists) {
    setDeploymentCondition(status, newDeploymentCondition(DEPLOYMENT_PROGRESSING, 'Unknown', RESUMED_DEPLOY_REASON, 'Deployment is resumed', now));
    needsUpdate = true;
  }
  if (!needsUpdate) return undefined;
  const res = yield* updateDeploymentStatus(d);
  return isOk(res) ? undefined : syncErrorOf(res, 'update deployment status');
}

/** Issues several RS scale-downs in order (used by Recreate). */
export function* scaleAll(dc: DeploymentController, rss: readonly ReplicaSet[], to: number, d: Deployment): Sync<{ scaled: boolean; err?: SyncError }> {
  let scaled = false;
  for (const rs of rss) {
    if (rsReplicas(rs) === to) continue;
    const r = yield* scaleReplicaSetAndRecordEvent(dc, rs, to, d);
    if (r.err) return { scaled, err: r.err };
    if (r.scaled) scaled = true;
  }
  return { scaled };
}

