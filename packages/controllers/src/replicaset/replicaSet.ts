/**
 * The ReplicaSet controller (`pkg/controller/replicaset/replica_set.go`, v1.22): informer
 * handlers, expectations, `syncReplicaSet` → `claimPods` → `manageReplicas` (slow-start creates,
 * ranked parallel deletes) → `calculateStatus` → `updateReplicaSetStatus`. Spec §12: a MODIFIED
 * setting a deletionTimestamp is a deletion, so the replacement comes at once (C14).
 * Not modelled: Events; adoption skips the uncached owner re-GET (`RecheckDeletionTimestamp`).
 */
import type { ApiResult, ParsedLabelSelector, Pod, ReplicaSet, ReplicaSetStatus } from '@podsim/api';
import { labelSelectorAsSelector, labelSetMatches, labelsMatch, seconds, selectorEmpty } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { all, call, hasStatusCause, isNotFound, isOk, objectOf, statusOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import { nowTimestamp, type ControllerEnv } from '../env.js';
import { UIDTrackingControllerExpectations } from '../expectations.js';
import { ControllerEventRecorder } from '../events.js';
import {
  CONTROLLER_UID_INDEX,
  controllerUidIndexFunc,
  type Informer,
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  ORPHAN_NAMESPACE_INDEX,
  orphanNamespaceIndexFunc,
} from '../informer.js';
import { getControllerOf, keyOf, mapsEqual, newControllerRef, objectKey, patchOwnerReferences } from '../objects.js';
import { getPodFromTemplate, isPodActive, isPodAvailable, isPodReady } from '../podutil.js';
import { Workers } from '../workqueue.js';
import { OwnedActivePods } from './activePods.js';
import { getPodsToDeleteByNodeCounts } from './podsToDelete.js';
import type { ControllerPlantedBug } from '../plantedBugs.js';
import { calculateStatus, type ManageReplicasError } from './replicaSetUtils.js';

/** `BurstReplicas`: the most creations or deletions one sync issues. */
export const BURST_REPLICAS = 500;
/** `controller.SlowStartInitialBatchSize`. */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;
/** `statusUpdateRetries`: one GET-and-retry after a failed status update. */
export const STATUS_UPDATE_RETRIES = 1;
/** `--concurrent-replicaset-syncs` default. */
export const CONCURRENT_REPLICASET_SYNCS = 5;

export interface ReplicaSetControllerOptions {
  readonly burstReplicas?: number;
  readonly workers?: number;
  /** Test-only planted bugs (plantedBugs.ts): `replicaSetNotReadyInactive`. */
  readonly plantedBugs?: ReadonlySet<ControllerPlantedBug>;
}

const RS_API_VERSION = 'apps/v1';
const RS_KIND = 'ReplicaSet';

export class ReplicaSetController {
  readonly expectations = new UIDTrackingControllerExpectations();
  readonly workers: Workers;
  private readonly owned = new Map<string, OwnedActivePods>();
  private readonly burstReplicas: number;
  /** The planted bug `replicaSetNotReadyInactive` (test-only). */
  private readonly notReadyInactive: boolean;
  /** `RealPodControl.Recorder`: SuccessfulCreate / FailedCreate / SuccessfulDelete / FailedDelete on the ReplicaSet. */
  private readonly recorder: ControllerEventRecorder;

  constructor(
    private readonly env: ControllerEnv,
    private readonly pods: Informer<Pod>,
    private readonly rss: Informer<ReplicaSet>,
    private readonly client: ApiClient,
    opts: ReplicaSetControllerOptions = {},
  ) {
    this.burstReplicas = opts.burstReplicas ?? BURST_REPLICAS;
    this.notReadyInactive = opts.plantedBugs?.has('replicaSetNotReadyInactive') ?? false;
    this.recorder = new ControllerEventRecorder(env, client, 'replicaset-controller');
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_REPLICASET_SYNCS, (key) => this.syncReplicaSet(key), client.sender);
    pods.addIndexer(ORPHAN_NAMESPACE_INDEX, orphanNamespaceIndexFunc);
    rss.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    rss.addIndexer(CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    pods.addEventHandler({
      onAdd: (p) => {
        this.indexPod(undefined, p);
        this.addPod(p);
      },
      onUpdate: (o, p) => {
        this.indexPod(o, p);
        this.updatePod(o, p);
      },
      onDelete: (p) => {
        this.indexPod(p, undefined);
        this.deletePod(p);
      },
    });
    rss.addEventHandler({
      onAdd: (rs) => this.enqueue(rs),
      onUpdate: (o, rs) => this.updateRS(o, rs),
      onDelete: (rs) => this.deleteRS(rs),
    });
  }

  /** The active pods owned by a ReplicaSet UID (for tests and the deployment controller). */
  activePodsOf(rsUid: string): OwnedActivePods | undefined {
    return this.owned.get(rsUid);
  }

  private enqueue(rs: ReplicaSet): void {
    this.workers.queue.add(objectKey(rs));
  }

  // ---- informer handlers ------------------------------------------------------------------

  /** Keeps {@link OwnedActivePods} current: an inactive pod (deletionTimestamp, terminal) leaves at once. */
  private indexPod(old: Pod | undefined, cur: Pod | undefined): void {
    const key = objectKey((cur ?? old)!);
    const oldRef = old ? getControllerOf(old) : undefined;
    // The planted bug `replicaSetNotReadyInactive` (test-only): a Ready=False pod counts as gone.
    const active = cur && isPodActive(cur) && !(this.notReadyInactive && cur.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'));
    const curRef = cur && active ? getControllerOf(cur) : undefined;
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const o = this.owned.get(oldRef.uid);
      if (o && o.delete(key) && o.size === 0) this.owned.delete(oldRef.uid);
    }
    if (curRef && curRef.kind === RS_KIND) {
      let o = this.owned.get(curRef.uid);
      if (!o) this.owned.set(curRef.uid, (o = new OwnedActivePods()));
      o.set(key, cur!, this.rss.get(keyOf(cur!.metadata.namespace, curRef.name)));
    }
  }

  /** `resolveControllerRef`: the cached RS the reference names, if its UID matches. */
  private resolveControllerRef(namespace: string | undefined, ref: { kind: string; name: string; uid: string } | undefined): ReplicaSet | undefined {
    if (!ref || ref.kind !== RS_KIND) return undefined;
    const rs = this.rss.get(keyOf(namespace, ref.name));
    return rs && rs.metadata.uid === ref.uid ? rs : undefined;
  }

  /** `getPodReplicaSets`: ReplicaSets in the pod's namespace whose selector matches it. */
  private getPodReplicaSets(pod: Pod): ReplicaSet[] {
    const out: ReplicaSet[] = [];
    for (const rs of this.rss.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '')) {
      const sel = labelSelectorAsSelector(rs.spec.selector);
      if ('error' in sel || selectorEmpty(sel)) continue;
      if (labelsMatch(sel, pod.metadata.labels)) out.push(rs);
    }
    return out;
  }

  /** `addPod`. A pod that arrives already being deleted counts as a deletion, not a creation. */
  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      this.deletePod(pod);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const rs = this.resolveControllerRef(pod.metadata.namespace, ref);
      if (!rs) return;
      this.expectations.creationObserved(objectKey(rs));
      this.enqueue(rs);
      return;
    }
    for (const rs of this.getPodReplicaSets(pod)) this.enqueue(rs);
  }

  /** `updatePod`: a deletionTimestamp is a deletion (spec §12); readiness may requeue for minReadySeconds. */
  private updatePod(old: Pod, cur: Pod): void {
    if (cur.metadata.resourceVersion === old.metadata.resourceVersion) return;
    const labelChanged = !mapsEqual(old.metadata.labels, cur.metadata.labels);
    if (cur.metadata.deletionTimestamp) {
      this.deletePod(cur);
      if (labelChanged) this.deletePod(old);
      return;
    }
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = curRef?.uid !== oldRef?.uid;
    if (refChanged && oldRef) {
      const rs = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (rs) this.enqueue(rs);
    }
    if (curRef) {
      const rs = this.resolveControllerRef(cur.metadata.namespace, curRef);
      if (!rs) return;
      this.enqueue(rs);
      const minReady = rs.spec.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) {
        // Upstream adds a second "to avoid milliseconds skew in AddAfter".
        this.workers.queue.addAfter(objectKey(rs), seconds(minReady) + seconds(1));
      }
      return;
    }
    if (labelChanged || refChanged) for (const rs of this.getPodReplicaSets(cur)) this.enqueue(rs);
  }

  /** `deletePod`: observes the deletion in the owner's expectations and requeues it. */
  private deletePod(pod: Pod): void {
    const ref = getControllerOf(pod);
    if (!ref) return;
    const rs = this.resolveControllerRef(pod.metadata.namespace, ref);
    if (!rs) return;
    this.expectations.deletionObserved(objectKey(rs), objectKey(pod));
    this.enqueue(rs);
  }

  private updateRS(old: ReplicaSet, cur: ReplicaSet): void {
    if (old.metadata.uid !== cur.metadata.uid) this.deleteRS(old);
    this.enqueue(cur);
  }

  private deleteRS(rs: ReplicaSet): void {
    this.expectations.deleteExpectations(objectKey(rs));
    this.enqueue(rs);
  }

  // ---- sync -------------------------------------------------------------------------------

  /** `syncReplicaSet(key)`. Returns a SyncError to requeue the key with backoff. */
  *syncReplicaSet(key: string): Sync<SyncError | undefined> {
    const rs = this.rss.get(key);
    if (!rs) {
      this.expectations.deleteExpectations(key);
      return undefined;
    }
    const rsNeedsSync = this.expectations.satisfiedExpectations(key, this.env.now);
    const selector = labelSelectorAsSelector(rs.spec.selector);
    if ('error' in selector) return undefined; // invalid selector: logged upstream, never requeued
    const uid = rs.metadata.uid ?? '';
    const owned = this.owned.get(uid);
    owned?.refresh(rs);

    const claim = yield* this.claimPods(rs, selector, owned);
    if (claim.error) return claim.error;
    const minReady = rs.spec.minReadySeconds ?? 0;
    // Status counts come from the pods listed at the start of the sync, as upstream.
    const counts = {
      replicas: claim.count,
      fullyLabeledReplicas: (owned?.fullyLabeledMatching() ?? 0) + claim.adopted.fully,
      readyReplicas: (owned?.readyMatching() ?? 0) + claim.adopted.ready,
      availableReplicas: (owned?.available(minReady, this.env.now, this.env.clock) ?? 0) + claim.adopted.available,
    };

    let manageErr: ManageReplicasError | undefined;
    if (rsNeedsSync && !rs.metadata.deletionTimestamp) manageErr = yield* this.manageReplicas(claim.count, claim.pods, rs);

    const newStatus = calculateStatus(rs, counts, manageErr, nowTimestamp(this.env));
    const upd = yield* this.updateReplicaSetStatus(rs, newStatus);
    if ('error' in upd) return upd.error;
    const updated = upd.rs;
    const replicas = updated.spec.replicas ?? 1;
    if (!manageErr && minReady > 0 && (updated.status?.readyReplicas ?? 0) === replicas && (updated.status?.availableReplicas ?? 0) !== replicas) {
      this.workers.queue.addAfter(key, seconds(minReady));
    }
    return manageErr ? { reason: manageErr.reason, message: manageErr.message } : undefined;
  }

  /**
   * `claimPods` (ControllerRefManager.ClaimPods on the active pods): keeps owned pods that match,
   * releases owned pods that no longer match, adopts matching orphans.
   */
  private *claimPods(
    rs: ReplicaSet,
    selector: ParsedLabelSelector,
    owned: OwnedActivePods | undefined,
  ): Sync<{ count: number; pods: () => Pod[]; adopted: { ready: number; fully: number; available: number }; error?: SyncError }> {
    const adopted = { ready: 0, fully: 0, available: 0 };
    const release = owned ? owned.mismatching() : [];
    const ns = rs.metadata.namespace ?? '';
    const orphans: Pod[] = [];
    if (!rs.metadata.deletionTimestamp && !selectorEmpty(selector)) {
      for (const p of this.pods.byIndex(ORPHAN_NAMESPACE_INDEX, ns)) {
        if (isPodActive(p) && labelsMatch(selector, p.metadata.labels)) orphans.push(p);
      }
    }
    // Nothing to adopt or release (every sync but the first): the claimed pods are the owned
    // matching ones, listed only if manageReplicas needs them (a scale-down, before any yield, so
    // the same list) instead of an array of every replica per sync.
    if (release.length === 0 && orphans.length === 0) return { count: owned ? owned.matchingCount() : 0, pods: () => (owned ? owned.matching() : []), adopted };
    const pods = owned ? owned.matching() : [];
    const ref = newControllerRef(rs, RS_API_VERSION, RS_KIND);
    const reqs = [
      ...release.map((p) => patchOwnerReferences('pods', p, (p.metadata.ownerReferences ?? []).filter((r) => r.uid !== rs.metadata.uid))),
      ...orphans.map((p) => patchOwnerReferences('pods', p, [...(p.metadata.ownerReferences ?? []), ref])),
    ];
    const results = yield* all(reqs);
    let error: SyncError | undefined;
    results.forEach((res, i) => {
      if (isOk(res) || isNotFound(res)) {
        if (i >= release.length && isOk(res)) {
          const p = orphans[i - release.length];
          pods.push(p);
          if (isPodReady(p)) adopted.ready++;
          if (isPodAvailable(p, rs.spec.minReadySeconds ?? 0, this.env.now, this.env.clock)) adopted.available++;
          if (labelSetMatches(rs.spec.template?.metadata?.labels, p.metadata.labels)) adopted.fully++;
        }
      } else error ??= syncErrorOf(res, i < release.length ? 'release pod' : 'adopt pod');
    });
    return { count: pods.length, pods: () => pods, adopted, error };
  }

  /**
   * `manageReplicas(filteredPods, rs)`: creates `min(replicas − active, burstReplicas)` pods in
   * slow-start batches, or deletes the surplus (ranked) in parallel. Returns the first error.
   */
  private *manageReplicas(active: number, filteredPods: () => readonly Pod[], rs: ReplicaSet): Sync<ManageReplicasError | undefined> {
    const replicas = rs.spec.replicas ?? 1;
    const diff = active - replicas;
    const key = objectKey(rs);
    const ns = rs.metadata.namespace ?? '';
    const rsName = rs.metadata.name ?? '';
    const subject = { apiVersion: RS_API_VERSION, kind: RS_KIND, metadata: rs.metadata };
    if (diff < 0) {
      const n = Math.min(-diff, this.burstReplicas);
      this.expectations.expectCreations(key, n, this.env.now);
      const ref = newControllerRef(rs, RS_API_VERSION, RS_KIND);
      let successes = 0;
      let remaining = n;
      let batch = Math.min(remaining, SLOW_START_INITIAL_BATCH_SIZE);
      let err: ManageReplicasError | undefined;
      while (batch > 0) {
        const reqs = Array.from({ length: batch }, () => ({
          type: 'ApiCreate' as const,
          resource: 'pods' as const,
          namespace: ns,
          object: getPodFromTemplate(rs.spec.template, rsName, ref),
        }));
        const results = yield* all(reqs);
        for (const res of results) {
          if (isOk(res)) {
            successes++;
            const pod = objectOf<Pod>(res);
            this.env.trace('controller.rs.create', `${ns}/${rsName} created pod ${pod.metadata.name}`, {
              namespace: ns,
              replicaset: rsName,
              pod: pod.metadata.name,
              uid: pod.metadata.uid,
            });
            this.recorder.event(subject, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name ?? ''}`);
          } else {
            this.env.trace('controller.rs.create', `${ns}/${rsName} create failed: ${res.code}`, { namespace: ns, replicaset: rsName, code: res.code });
            // If the namespace is being terminated, we don't have to do anything because any
            // creation will fail: counted as a success, so the expectation stays until it expires.
            if (hasStatusCause(res, 'NamespaceTerminating')) successes++;
            else {
              err ??= { reason: 'FailedCreate', message: statusOf(res).message ?? `HTTP ${res.code}` };
              this.recorder.event(subject, 'Warning', 'FailedCreate', `Error creating: ${statusOf(res).message ?? `HTTP ${res.code}`}`);
            }
          }
        }
        if (err) break;
        remaining -= batch;
        batch = Math.min(2 * batch, remaining);
      }
      // Creations that failed or were never attempted will not be observed.
      for (let i = successes; i < n; i++) this.expectations.creationObserved(key);
      return err;
    }
    if (diff > 0) {
      const n = Math.min(diff, this.burstReplicas);
      const toDelete = getPodsToDeleteByNodeCounts(filteredPods(), this.relatedPodsPerNode(rs), n, this.env.now, this.env.clock);
      this.expectations.expectDeletions(
        key,
        toDelete.map((p) => objectKey(p)),
        this.env.now,
      );
      const results = yield* all(
        toDelete.map((p) => ({ type: 'ApiDelete' as const, resource: 'pods' as const, namespace: ns, name: p.metadata.name ?? '', options: {} })),
      );
      let err: ManageReplicasError | undefined;
      results.forEach((res, i) => {
        const p = toDelete[i];
        this.env.trace('controller.rs.delete', `${ns}/${rsName} deleted pod ${p.metadata.name}: ${res.code}`, {
          namespace: ns,
          replicaset: rsName,
          pod: p.metadata.name,
          uid: p.metadata.uid,
          code: res.code,
        });
        if (!isOk(res)) {
          // The informer will not observe this deletion.
          this.expectations.deletionObserved(key, objectKey(p));
          if (!isNotFound(res)) {
            err ??= { reason: 'FailedDelete', message: statusOf(res).message ?? `HTTP ${res.code}` };
            this.recorder.event(subject, 'Warning', 'FailedDelete', `Error deleting: ${statusOf(res).message ?? `HTTP ${res.code}`}`);
          }
        } else this.recorder.event(subject, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name ?? ''}`);
      });
      return err;
    }
    return undefined;
  }

  /**
   * `getIndirectlyRelatedPods` reduced to what the ranking reads: active pods per node of every
   * ReplicaSet with the same controller (none for a ReplicaSet without a controller, as upstream).
   */
  private relatedPodsPerNode(rs: ReplicaSet): ReadonlyMap<string, number> {
    const ref = getControllerOf(rs);
    if (!ref) return new Map();
    const maps: ReadonlyMap<string, number>[] = [];
    for (const k of this.rss.indexKeys(CONTROLLER_UID_INDEX, ref.uid)) {
      const o = this.owned.get(this.rss.get(k)!.metadata.uid ?? '');
      if (o) maps.push(o.perNode);
    }
    if (maps.length === 1) return maps[0];
    const sum = new Map<string, number>();
    for (const m of maps) for (const [node, n] of m) sum.set(node, (sum.get(node) ?? 0) + n);
    return sum;
  }

  /**
   * `updateReplicaSetStatus`: skips the write when nothing changed, else PUTs the status
   * subresource with `observedGeneration = generation`; after a failure GETs the RS and retries once.
   */
  private *updateReplicaSetStatus(rs: ReplicaSet, newStatus: ReplicaSetStatus): Sync<{ rs: ReplicaSet } | { error: SyncError }> {
    const old = (rs.status ?? { replicas: 0 }) as ReplicaSetStatus;
    const generation = rs.metadata.generation ?? 0;
    if (
      (old.replicas ?? 0) === newStatus.replicas &&
      (old.fullyLabeledReplicas ?? 0) === newStatus.fullyLabeledReplicas &&
      (old.readyReplicas ?? 0) === newStatus.readyReplicas &&
      (old.availableReplicas ?? 0) === newStatus.availableReplicas &&
      generation === (old.observedGeneration ?? 0) &&
      conditionsEqual(old.conditions, newStatus.conditions)
    ) {
      return { rs };
    }
    const status: ReplicaSetStatus = { ...newStatus, observedGeneration: generation };
    let cur = rs;
    for (let i = 0; ; i++) {
      const res: ApiResult = yield* call({
        type: 'ApiUpdate',
        resource: 'replicasets',
        namespace: cur.metadata.namespace,
        name: cur.metadata.name ?? '',
        subresource: 'status',
        object: { ...cur, status } as ReplicaSet,
      });
      if (isOk(res)) return { rs: objectOf<ReplicaSet>(res) };
      if (i >= STATUS_UPDATE_RETRIES) return { error: syncErrorOf(res, 'update replicaset status') };
      const got: ApiResult = yield* call({ type: 'ApiGet', resource: 'replicasets', namespace: cur.metadata.namespace, name: cur.metadata.name ?? '' });
      if (!isOk(got)) return { error: syncErrorOf(got, 'get replicaset') };
      cur = objectOf<ReplicaSet>(got);
    }
  }
}

function conditionsEqual(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

