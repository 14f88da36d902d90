/**
 * The Deployment controller (`pkg/controller/deployment/deployment_controller.go`, v1.22):
 * handlers (pod deletions matter only to Recreate) and `syncDeployment`: claim ReplicaSets, then
 * status only (being deleted), `sync` (paused or scaling), `rolloutRecreate` or `rolloutRolling`.
 * Not modelled: Events, the rollback annotation, the uncached owner re-GET on adoption;
 * `deletePod` reads the cache where upstream LISTs ReplicaSets from the apiserver.
 */
import { ControllerEventRecorder } from '../events.js';
import type { Deployment, Pod, ReplicaSet } from '@podsim/api';
import { labelSelectorAsSelector, labelsMatch, selectorEmpty } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { all, isNotFound, isOk, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, type Informer, NAMESPACE_INDEX, namespaceIndexFunc, ORPHAN_NAMESPACE_INDEX, orphanNamespaceIndexFunc } from '../informer.js';
import { getControllerOf, keyOf, mapsEqual, newControllerRef, objectKey } from '../objects.js';
import { Workers } from '../workqueue.js';
import { withDeploymentDefaults } from './deploymentUtil.js';
import { rolloutRecreate, type PodMap } from './recreate.js';
import { rolloutRolling } from './rolling.js';
import { checkPausedConditions, getAllReplicaSetsAndSyncRevision, isScalingEvent, sync, syncDeploymentStatus, updateDeploymentStatus } from './sync.js';

/** `--concurrent-deployment-syncs` default. */
export const CONCURRENT_DEPLOYMENT_SYNCS = 5;

export interface DeploymentControllerOptions {
  readonly workers?: number;
}

export class DeploymentController {
  readonly workers: Workers;
  /** `dc.eventRecorder` (component `deployment-controller`): ScalingReplicaSet, FailedCreate. */
  readonly recorder: ControllerEventRecorder;

  constructor(
    readonly env: ControllerEnv,
    readonly dInformer: Informer<Deployment>,
    readonly rsInformer: Informer<ReplicaSet>,
    readonly podInformer: Informer<Pod>,
    readonly client: ApiClient,
    opts: DeploymentControllerOptions = {},
  ) {
    this.recorder = new ControllerEventRecorder(env, client, 'deployment-controller');
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_DEPLOYMENT_SYNCS, (key) => this.syncDeployment(key), client.sender);
    dInformer.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    rsInformer.addIndexer(CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    rsInformer.addIndexer(ORPHAN_NAMESPACE_INDEX, orphanNamespaceIndexFunc);
    podInformer.addIndexer(CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    dInformer.addEventHandler({
      onAdd: (d) => this.enqueue(d),
      onUpdate: (_o, d) => this.enqueue(d),
      onDelete: (d) => this.enqueue(d),
    });
    rsInformer.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (o, rs) => this.updateReplicaSet(o, rs),
      onDelete: (rs) => this.deleteReplicaSet(rs),
    });
    podInformer.addEventHandler({ onDelete: (p) => this.deletePod(p) });
  }

  enqueue(d: Deployment): void {
    this.workers.queue.add(objectKey(d));
  }

  // ---- handlers ---------------------------------------------------------------------------

  private resolveControllerRef(namespace: string | undefined, ref: { kind: string; name: string; uid: string } | undefined): Deployment | undefined {
    if (!ref || ref.kind !== 'Deployment') return undefined;
    const d = this.dInformer.get(keyOf(namespace, ref.name));
    return d && d.metadata.uid === ref.uid ? d : undefined;
  }

  /** `getDeploymentsForReplicaSet`: deployments in the namespace whose selector matches. */
  private getDeploymentsForReplicaSet(rs: ReplicaSet): Deployment[] {
    return this.dInformer.byIndex(NAMESPACE_INDEX, rs.metadata.namespace ?? '').filter((d) => {
      const sel = labelSelectorAsSelector(d.spec.selector);
      return !('error' in sel) && !selectorEmpty(sel) && labelsMatch(sel, rs.metadata.labels);
    });
  }

  private addReplicaSet(rs: ReplicaSet): void {
    if (rs.metadata.deletionTimestamp) {
      this.deleteReplicaSet(rs);
      return;
    }
    const ref = getControllerOf(rs);
    if (ref) {
      const d = this.resolveControllerRef(rs.metadata.namespace, ref);
      if (d) this.enqueue(d);
      return;
    }
    for (const d of this.getDeploymentsForReplicaSet(rs)) this.enqueue(d);
  }

  private updateReplicaSet(old: ReplicaSet, cur: ReplicaSet): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = curRef?.uid !== oldRef?.uid;
    if (refChanged && oldRef) {
      const d = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (d) this.enqueue(d);
    }
    if (curRef) {
      const d = this.resolveControllerRef(cur.metadata.namespace, curRef);
      if (d) this.enqueue(d);
      return;
    }
    if (!mapsEqual(old.metadata.labels, cur.metadata.labels) || refChanged) for (const d of this.getDeploymentsForReplicaSet(cur)) this.enqueue(d);
  }

  private deleteReplicaSet(rs: ReplicaSet): void {
    const d = this.resolveControllerRef(rs.metadata.namespace, getControllerOf(rs));
    if (d) this.enqueue(d);
  }

  /** `deletePod`: for Recreate, sync once the deployment has no pods left. */
  private deletePod(pod: Pod): void {
    const ref = getControllerOf(pod);
    if (!ref || ref.kind !== 'ReplicaSet') return;
    const rs = this.rsInformer.get(keyOf(pod.metadata.namespace, ref.name));
    if (!rs || rs.metadata.uid !== ref.uid) return;
    const d = this.resolveControllerRef(rs.metadata.namespace, getControllerOf(rs));
    if (!d || d.spec.strategy?.type !== 'Recreate') return;
    for (const k of this.rsInformer.indexKeys(CONTROLLER_UID_INDEX, d.metadata.uid ?? '')) {
      const owned = this.rsInformer.get(k)!;
      if (this.podInformer.indexKeys(CONTROLLER_UID_INDEX, owned.metadata.uid ?? '').size > 0) return;
    }
    this.enqueue(d);
  }

  // ---- sync -------------------------------------------------------------------------------

  /** `syncDeployment(key)`. */
  *syncDeployment(key: string): Sync<SyncError | undefined> {
    const cached = this.dInformer.get(key);
    if (!cached) return undefined;
    // The sync edits d's annotations and status (as upstream edits its DeepCopy); spec and
    // template are shared read-only, so template comparisons hit their cache.
    const d = withDeploymentDefaults({
      ...cached,
      metadata: { ...cached.metadata, ...(cached.metadata.annotations ? { annotations: { ...cached.metadata.annotations } } : {}) },
      ...(cached.status ? { status: { ...cached.status } } : {}),
    });
    const sel = labelSelectorAsSelector(d.spec.selector);
    if ('error' in sel) return undefined;
    if (selectorEmpty(sel)) {
      // "Selecting all pods": refuse to act, but record that the generation was seen.
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        d.status = { ...(d.status ?? {}), observedGeneration: d.metadata.generation };
        const res = yield* updateDeploymentStatus(d);
        if (!isOk(res)) return syncErrorOf(res, 'update deployment status');
      }
      return undefined;
    }
    const claimed = yield* this.getReplicaSetsForDeployment(d);
    if (claimed.err) return claimed.err;
    const rsList = claimed.rss;
    // Only Recreate reads the pod map (oldPodsRunning); it is listed before any API call, as upstream.
    const podMap = d.spec.strategy?.type === 'Recreate' ? this.getPodMapForDeployment(d, rsList) : undefined;

    if (d.metadata.deletionTimestamp) {
      const all = yield* getAllReplicaSetsAndSyncRevision(this, d, rsList, false);
      if (all.err) return all.err;
      return yield* syncDeploymentStatus(this, [...all.oldRSs, all.newRS], all.newRS, d);
    }
    const pe = yield* checkPausedConditions(this, d);
    if (pe) return pe;
    if (d.spec.paused) return yield* sync(this, d, rsList);

    const scalingEvent = yield* isScalingEvent(this, d, rsList);
    if (scalingEvent.err) return scalingEvent.err;
    if (scalingEvent.scaling) return yield* sync(this, d, rsList);

    if (podMap) return yield* rolloutRecreate(this, d, rsList, podMap);
    return yield* rolloutRolling(this, d, rsList);
  }

  /**
   * `getReplicaSetsForDeployment` (ClaimReplicaSets): owned RSs whose labels match the
   * selector, plus adopted orphans; owned RSs that stopped matching are released.
   */
  private *getReplicaSetsForDeployment(d: Deployment): Sync<{ rss: ReplicaSet[]; err?: SyncError }> {
    const sel = labelSelectorAsSelector(d.spec.selector);
    if ('error' in sel) return { rss: [] };
    const out: ReplicaSet[] = [];
    const release: ReplicaSet[] = [];
    for (const rs of this.rsInformer.byIndex(CONTROLLER_UID_INDEX, d.metadata.uid ?? '')) {
      if (labelsMatch(sel, rs.metadata.labels)) out.push(rs);
      else if (!d.metadata.deletionTimestamp) release.push(rs);
    }
    const adopt = d.metadata.deletionTimestamp
      ? []
      : this.rsInformer.byIndex(ORPHAN_NAMESPACE_INDEX, d.metadata.namespace ?? '').filter((rs) => !rs.metadata.deletionTimestamp && labelsMatch(sel, rs.metadata.labels));
    if (release.length === 0 && adopt.length === 0) return { rss: out };
    const ref = newControllerRef(d, 'apps/v1', 'Deployment');
    const reqs = [
      ...release.map((rs) => patchRefs(rs, (rs.metadata.ownerReferences ?? []).filter((r) => r.uid !== d.metadata.uid))),
      ...adopt.map((rs) => patchRefs(rs, [...(rs.metadata.ownerReferences ?? []), ref])),
    ];
    const results = yield* all(reqs);
    let err: SyncError | undefined;
    results.forEach((res, i) => {
      if (isOk(res)) {
        if (i >= release.length) out.push(res.body as ReplicaSet);
      } else if (!isNotFound(res)) err ??= syncErrorOf(res, 'claim replicaset');
    });
    return { rss: out, err };
  }

  /** `getPodMapForDeployment`: the deployment's pods by controlling RS UID (Recreate only). */
  getPodMapForDeployment(d: Deployment, rsList: readonly ReplicaSet[]): PodMap {
    const sel = labelSelectorAsSelector(d.spec.selector);
    const m = new Map<string, Pod[]>();
    for (const rs of rsList) {
      const uid = rs.metadata.uid ?? '';
      const pods = this.podInformer.byIndex(CONTROLLER_UID_INDEX, uid);
      m.set(uid, 'error' in sel ? [] : pods.filter((p) => labelsMatch(sel, p.metadata.labels)));
    }
    return m;
  }
}

function patchRefs(rs: ReplicaSet, refs: unknown[]) {
  return {
    type: 'ApiPatch' as const,
    resource: 'replicasets' as const,
    namespace: rs.metadata.namespace,
    name: rs.metadata.name ?? '',
    patchType: 'merge' as const,
    patch: { metadata: { ownerReferences: refs.length > 0 ? refs : null } },
  };
}

