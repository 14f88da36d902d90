/**
 * The StatefulSet controller (`pkg/controller/statefulset/stateful_set.go`, v1.22): informer
 * handlers (pods, sets; revisions and claims are listers only), `sync` → adoptOrphanRevisions →
 * getPodsForStatefulSet (ClaimPods with the isMemberOf filter) → `defaultStatefulSetControl.
 * UpdateStatefulSet` (`stateful_set_control.go`: ListRevisions, performUpdate →
 * getStatefulSetRevisions → updateStatefulSet → updateStatefulSetStatus, truncateHistory), with
 * `realStatefulPodControl` (`stateful_pod_control.go`: claims from the lister created before the
 * pod, plain DELETEs, `SuccessfulCreate`/`SuccessfulDelete` events in its "create Pod … in
 * StatefulSet … successful" format) and `realHistory` (`history/controller_history.go`:
 * CreateControllerRevision with hash-collision retries). No expectations: each sync rebuilds
 * from the informer cache, so a pod object still in the cache — terminating or not — holds its
 * name, and a replacement is POSTed only after the DELETED event (spec §2.5).
 *
 * Not modelled: the uncached re-GET before adoption (`RecheckDeletionTimestamp`), the
 * MinReadySeconds gate (off in 1.22), RetryOnConflict's back-off (retried at once, ≤ 5 times).
 */
import type { ApiResult, ControllerRevision, ParsedLabelSelector, PersistentVolumeClaim, Pod, StatefulSet, StatefulSetStatus } from '@podsim/api';
import { labelSelectorAsSelector, labelsMatch, selectorEmpty } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { call, isAlreadyExists, isConflict, isNotFound, isOk, objectOf, statusOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import { ControllerEventRecorder } from '../events.js';
import { type Informer, NAMESPACE_INDEX, namespaceIndexFunc } from '../informer.js';
import { deepCopy, getControllerOf, keyOf, mapsEqual, newControllerRef, objectKey, patchOwnerReferences } from '../objects.js';
import { Workers } from '../workqueue.js';
import { applyDelta, planStatefulSetUpdate, revisionsToTruncate, type StatefulSetStep } from './statefulSetControl.js';
import {
  applyRevision,
  completeRollingUpdate,
  equalRevision,
  getPersistentVolumeClaims,
  hashControllerRevision,
  controllerRevisionName,
  identityMatches,
  inconsistentStatus,
  isMemberOf,
  newRevision,
  nextRevision,
  sortControllerRevisions,
  STS_API_VERSION,
  STS_KIND,
  storageMatches,
  updateIdentity,
  updateStorage,
  getOrdinal,
} from './statefulSetUtils.js';

/** `--concurrent-statefulset-syncs` default. */
export const CONCURRENT_STATEFULSET_SYNCS = 5;
/** `retry.DefaultRetry.Steps`: attempts of a RetryOnConflict loop. */
const RETRY_ON_CONFLICT_STEPS = 5;
/** The controller's event source (`statefulset-controller`). */
export const STATEFULSET_CONTROLLER = 'statefulset-controller';

export interface StatefulSetControllerOptions {
  readonly workers?: number;
}

/** The most replicas a StatefulSet may have for podsim to sync it (podsim's limit; upstream has none below int32). */
export const MAX_SIMULATED_STATEFULSET_REPLICAS = 100_000;

export class StatefulSetController {
  readonly workers: Workers;
  readonly recorder: ControllerEventRecorder;

  constructor(
    private readonly env: ControllerEnv,
    private readonly pods: Informer<Pod>,
    private readonly sets: Informer<StatefulSet>,
    private readonly revisions: Informer<ControllerRevision>,
    private readonly pvcs: Informer<PersistentVolumeClaim>,
    private readonly client: ApiClient,
    opts: StatefulSetControllerOptions = {},
  ) {
    this.recorder = new ControllerEventRecorder(env, client, STATEFULSET_CONTROLLER);
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_STATEFULSET_SYNCS, (key) => this.sync(key), client.sender);
    pods.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    sets.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    revisions.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    pods.addEventHandler({ onAdd: (p) => this.addPod(p), onUpdate: (o, p) => this.updatePod(o, p), onDelete: (p) => this.deletePod(p) });
    sets.addEventHandler({ onAdd: (s) => this.enqueue(s), onUpdate: (_o, s) => this.enqueue(s), onDelete: (s) => this.enqueue(s) });
  }

  private enqueue(set: StatefulSet): void {
    this.workers.queue.add(objectKey(set));
  }

  // ---- informer handlers ------------------------------------------------------------------

  private resolveControllerRef(namespace: string | undefined, ref: { kind: string; name: string; uid: string } | undefined): StatefulSet | undefined {
    if (!ref || ref.kind !== STS_KIND) return undefined;
    const set = this.sets.get(keyOf(namespace, ref.name));
    return set && set.metadata.uid === ref.uid ? set : undefined;
  }

  /** `getStatefulSetsForPod`: sets in the pod's namespace whose selector matches it. */
  private getPodStatefulSets(pod: Pod): StatefulSet[] {
    return this.sets.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '').filter((s) => {
      const sel = labelSelectorAsSelector(s.spec.selector);
      return !('error' in sel) && !selectorEmpty(sel) && labelsMatch(sel, pod.metadata.labels);
    });
  }

  /** `addPod`: one that arrives with a deletionTimestamp is a delete (a restart's relist). */
  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) return this.deletePod(pod);
    const ref = getControllerOf(pod);
    if (ref) {
      const set = this.resolveControllerRef(pod.metadata.namespace, ref);
      if (set) this.enqueue(set);
      return;
    }
    for (const s of this.getPodStatefulSets(pod)) this.enqueue(s);
  }

  /** `updatePod`: unlike the ReplicaSet, a deletionTimestamp is just an update (the slot stays held). */
  private updatePod(old: Pod, cur: Pod): void {
    if (cur.metadata.resourceVersion === old.metadata.resourceVersion) return;
    const labelChanged = !mapsEqual(old.metadata.labels, cur.metadata.labels);
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = curRef?.uid !== oldRef?.uid;
    if (refChanged && oldRef) {
      const s = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (s) this.enqueue(s);
    }
    if (curRef) {
      const s = this.resolveControllerRef(cur.metadata.namespace, curRef);
      if (s) this.enqueue(s);
      return;
    }
    if (labelChanged || refChanged) for (const s of this.getPodStatefulSets(cur)) this.enqueue(s);
  }

  private deletePod(pod: Pod): void {
    const s = this.resolveControllerRef(pod.metadata.namespace, getControllerOf(pod));
    if (s) this.enqueue(s);
  }

  // ---- sync -------------------------------------------------------------------------------

  /** `sync(key)`. Returns a SyncError to requeue the key rate-limited. */
  *sync(key: string): Sync<SyncError | undefined> {
    const set = this.sets.get(key);
    if (!set) return undefined;
    const selector = labelSelectorAsSelector(set.spec.selector);
    // An invalid selector is logged upstream and never requeued.
    if ('error' in selector) return undefined;
    const adoptErr = yield* this.adoptOrphanRevisions(set, selector);
    if (adoptErr) return adoptErr;
    const claimed = yield* this.getPodsForStatefulSet(set, selector);
    if ('error' in claimed) return claimed.error;
    return yield* this.updateStatefulSetControl(set, selector, claimed.pods);
  }

  /** `ListControllerRevisions(set, selector)`: matching revisions owned by the set or orphaned. */
  private listRevisions(set: StatefulSet, selector: ParsedLabelSelector): ControllerRevision[] {
    return this.revisions.byIndex(NAMESPACE_INDEX, set.metadata.namespace ?? '').filter((r) => {
      if (!labelsMatch(selector, r.metadata.labels)) return false;
      const ref = getControllerOf(r);
      return !ref || ref.uid === set.metadata.uid;
    });
  }

  /** `adoptOrphanRevisions`: orphaned matching revisions get the set as controller. */
  private *adoptOrphanRevisions(set: StatefulSet, selector: ParsedLabelSelector): Sync<SyncError | undefined> {
    if (set.metadata.deletionTimestamp) return undefined;
    for (const r of this.listRevisions(set, selector)) {
      if (getControllerOf(r)) continue;
      const res = yield* call(patchOwnerReferences('controllerrevisions', r, [...(r.metadata.ownerReferences ?? []), newControllerRef(set, STS_API_VERSION, STS_KIND)]));
      if (!isOk(res) && !isNotFound(res)) return syncErrorOf(res, 'adopt controllerrevision');
    }
    return undefined;
  }

  /**
   * `getPodsForStatefulSet` → `ClaimPods(pods, isMemberOf)`: keeps owned members that match,
   * releases owned pods that no longer do, adopts matching orphan members (not while the set or
   * the pod is being deleted).
   */
  private *getPodsForStatefulSet(set: StatefulSet, selector: ParsedLabelSelector): Sync<{ pods: Pod[] } | { error: SyncError }> {
    const out: Pod[] = [];
    const deleting = Boolean(set.metadata.deletionTimestamp);
    for (const pod of this.pods.byIndex(NAMESPACE_INDEX, set.metadata.namespace ?? '')) {
      const match = !selectorEmpty(selector) && labelsMatch(selector, pod.metadata.labels) && isMemberOf(set, pod);
      const ref = getControllerOf(pod);
      if (ref) {
        if (ref.uid !== set.metadata.uid) continue;
        if (match) {
          out.push(pod);
          continue;
        }
        if (deleting) continue;
        const res = yield* call(patchOwnerReferences('pods', pod, (pod.metadata.ownerReferences ?? []).filter((r) => r.uid !== set.metadata.uid)));
        if (!isOk(res) && !isNotFound(res)) return { error: syncErrorOf(res, 'release pod') };
        continue;
      }
      if (deleting || !match || pod.metadata.deletionTimestamp) continue;
      const res = yield* call(patchOwnerReferences('pods', pod, [...(pod.metadata.ownerReferences ?? []), newControllerRef(set, STS_API_VERSION, STS_KIND)]));
      if (isOk(res)) out.push(objectOf<Pod>(res));
      else if (!isNotFound(res)) return { error: syncErrorOf(res, 'adopt pod') };
    }
    return { pods: out };
  }

  /** `defaultStatefulSetControl.UpdateStatefulSet`: performUpdate, then truncateHistory. */
  private *updateStatefulSetControl(set: StatefulSet, selector: ParsedLabelSelector, pods: Pod[]): Sync<SyncError | undefined> {
    const revisions = sortControllerRevisions(this.listRevisions(set, selector));
    const revs = yield* this.getStatefulSetRevisions(set, revisions);
    if ('error' in revs) return revs.error;
    const { currentRevision, updateRevision, collisionCount } = revs;
    const currentSet = applyRevision(set, currentRevision);
    const updateSet = applyRevision(set, updateRevision);
    // podsim's own limit, not upstream's: the plan holds one slot per replica (as upstream's
    // `make([]*v1.Pod, replicaCount)` does), so 1e9 replicas would exhaust the heap and end the
    // whole simulation (podsim serve with it). Such a set is left alone and said so.
    if ((set.spec.replicas ?? 1) > MAX_SIMULATED_STATEFULSET_REPLICAS) {
      this.env.trace('controller.sts.tooLarge', `${set.metadata.namespace ?? ''}/${set.metadata.name}: ${set.spec.replicas} replicas, more than podsim simulates (${MAX_SIMULATED_STATEFULSET_REPLICAS}); not synced`);
      this.env.count('controller.sts.tooLarge');
      return undefined;
    }
    const plan = planStatefulSetUpdate(set, currentSet, updateSet, currentRevision, updateRevision, collisionCount, pods);
    const status: StatefulSetStatus = { ...plan.status };
    const ns = set.metadata.namespace ?? '';
    if (this.env.tracing('controller.sts.sync')) {
      this.env.trace('controller.sts.sync', `${ns}/${set.metadata.name} ${plan.steps.map((s) => `${s.op} ${s.pod.metadata.name}`).join(', ') || 'no change'} (${plan.stop})`, {
        namespace: ns,
        statefulset: set.metadata.name,
        stop: plan.stop,
        firstUnhealthy: plan.firstUnhealthy,
      });
    }
    for (const step of plan.steps) {
      const err = yield* this.perform(set, updateSet, step);
      if (step.op === 'deleteForUpdate' || !err) applyDelta(status, step.delta);
      if (err) return err;
    }
    const stErr = yield* this.updateStatefulSetStatus(set, status);
    if (stErr) return stErr;
    for (const r of revisionsToTruncate(set, pods, revisions, currentRevision.metadata.name ?? '', updateRevision.metadata.name ?? '')) {
      const res = yield* call({ type: 'ApiDelete', resource: 'controllerrevisions', namespace: ns, name: r.metadata.name ?? '', options: {} });
      if (!isOk(res) && !isNotFound(res)) return syncErrorOf(res, 'delete controllerrevision');
    }
    return undefined;
  }

  /**
   * `getStatefulSetRevisions`: the update revision is the newest revision if it equals the
   * current template; an older equal one is bumped to the next revision number (a rollback);
   * else a new revision is created. The current revision is `status.currentRevision`'s, or the
   * update revision.
   */
  private *getStatefulSetRevisions(
    set: StatefulSet,
    revisions: readonly ControllerRevision[],
  ): Sync<{ currentRevision: ControllerRevision; updateRevision: ControllerRevision; collisionCount: number } | { error: SyncError }> {
    let collisionCount = set.status?.collisionCount ?? 0;
    let updateRevision = newRevision(set, nextRevision(revisions), collisionCount);
    const equal = revisions.filter((r) => equalRevision(r, updateRevision));
    const last = revisions[revisions.length - 1];
    if (equal.length > 0 && last && equalRevision(last, equal[equal.length - 1])) {
      updateRevision = last;
    } else if (equal.length > 0) {
      const res = yield* this.updateControllerRevision(equal[equal.length - 1], updateRevision.revision);
      if ('error' in res) return res;
      updateRevision = res.revision;
    } else {
      const res = yield* this.createControllerRevision(set, updateRevision, collisionCount);
      if ('error' in res) return res;
      updateRevision = res.revision;
      collisionCount = res.collisionCount;
    }
    const currentRevision = revisions.find((r) => r.metadata.name === set.status?.currentRevision) ?? updateRevision;
    return { currentRevision, updateRevision, collisionCount };
  }

  /** `realHistory.CreateControllerRevision`: AlreadyExists with other data is a hash collision (count+1, retry). */
  private *createControllerRevision(set: StatefulSet, revision: ControllerRevision, collisionCount: number): Sync<{ revision: ControllerRevision; collisionCount: number } | { error: SyncError }> {
    const ns = set.metadata.namespace ?? '';
    for (let cc = collisionCount; ; cc++) {
      const clone: ControllerRevision = { ...revision, metadata: { ...revision.metadata, name: controllerRevisionName(set.metadata.name ?? '', hashControllerRevision(revision.data, cc)) } };
      const res = yield* call({ type: 'ApiCreate', resource: 'controllerrevisions', namespace: ns, object: clone });
      if (isOk(res)) return { revision: objectOf<ControllerRevision>(res), collisionCount: cc };
      if (!isAlreadyExists(res)) return { error: syncErrorOf(res, 'create controllerrevision') };
      const got = yield* call({ type: 'ApiGet', resource: 'controllerrevisions', namespace: ns, name: clone.metadata.name ?? '' });
      if (!isOk(got)) return { error: syncErrorOf(got, 'get controllerrevision') };
      const exists = objectOf<ControllerRevision>(got);
      if (equalRevision(exists, clone)) return { revision: exists, collisionCount: cc };
    }
  }

  /** `realHistory.UpdateControllerRevision`: sets `revision` (RetryOnConflict, re-reading the lister). */
  private *updateControllerRevision(rev: ControllerRevision, revision: number): Sync<{ revision: ControllerRevision } | { error: SyncError }> {
    let cur = rev;
    for (let i = 0; ; i++) {
      if (cur.revision === revision) return { revision: cur };
      const res = yield* call({ type: 'ApiUpdate', resource: 'controllerrevisions', namespace: cur.metadata.namespace, name: cur.metadata.name ?? '', object: { ...cur, revision } as ControllerRevision });
      if (isOk(res)) return { revision: objectOf<ControllerRevision>(res) };
      if (!isConflict(res) || i + 1 >= RETRY_ON_CONFLICT_STEPS) return { error: syncErrorOf(res, 'update controllerrevision') };
      cur = this.revisions.get(objectKey(cur)) ?? cur;
    }
  }

  /** One planned step through `realStatefulPodControl`. */
  private *perform(set: StatefulSet, updateSet: StatefulSet, step: StatefulSetStep): Sync<SyncError | undefined> {
    const ns = set.metadata.namespace ?? '';
    const setName = set.metadata.name ?? '';
    const podName = step.pod.metadata.name ?? '';
    switch (step.op) {
      case 'deleteFailed':
        this.recorder.event(set, 'Warning', 'RecreatingFailedPod', `StatefulSet ${ns}/${setName} is recreating failed Pod ${podName}`);
        return yield* this.deleteStatefulPod(set, step.pod, 'failed');
      case 'deleteCondemned':
        return yield* this.deleteStatefulPod(set, step.pod, 'condemned');
      case 'deleteForUpdate':
        return yield* this.deleteStatefulPod(set, step.pod, 'update');
      case 'create':
        return yield* this.createStatefulPod(set, step.pod, step.ordinal);
      case 'update':
        return yield* this.updateStatefulPod(updateSet, step.pod);
    }
  }

  /** `recordPodEvent(verb, set, pod, err)`: `Successful<Verb>` / `Failed<Verb>` in the set's event stream. */
  private recordPodEvent(verb: 'create' | 'delete' | 'update', set: StatefulSet, pod: Pod, res: ApiResult | undefined, errText?: string): void {
    const Verb = verb[0].toUpperCase() + verb.slice(1);
    const name = pod.metadata.name ?? '';
    const setName = set.metadata.name ?? '';
    if (res && isOk(res) && errText === undefined) this.recorder.event(set, 'Normal', `Successful${Verb}`, `${verb} Pod ${name} in StatefulSet ${setName} successful`);
    else this.recorder.event(set, 'Warning', `Failed${Verb}`, `${verb} Pod ${name} in StatefulSet ${setName} failed error: ${errText ?? statusOf(res!).message ?? ''}`);
  }

  /** `DeleteStatefulPod`: a DELETE with empty options (the pod's own grace). */
  private *deleteStatefulPod(set: StatefulSet, pod: Pod, why: 'failed' | 'condemned' | 'update'): Sync<SyncError | undefined> {
    const ns = set.metadata.namespace ?? '';
    const res = yield* call({ type: 'ApiDelete', resource: 'pods', namespace: ns, name: pod.metadata.name ?? '', options: {} });
    this.env.trace('controller.sts.delete', `${ns}/${set.metadata.name} deleted pod ${pod.metadata.name} (${why}): ${res.code}`, {
      namespace: ns,
      statefulset: set.metadata.name,
      pod: pod.metadata.name,
      uid: pod.metadata.uid,
      ordinal: getOrdinal(pod),
      why,
      code: res.code,
    });
    this.recordPodEvent('delete', set, pod, res);
    return isOk(res) ? undefined : syncErrorOf(res, `delete pod ${pod.metadata.name}`);
  }

  /**
   * `createPersistentVolumeClaims`: each claim missing from the lister is created (event per
   * claim); one that is being deleted is an error ("pvc <name> is being deleted").
   */
  private *createPersistentVolumeClaims(set: StatefulSet, pod: Pod): Sync<string[]> {
    const errs: string[] = [];
    const setName = set.metadata.name ?? '';
    for (const { claim } of getPersistentVolumeClaims(set, pod)) {
      const name = claim.metadata.name ?? '';
      const existing = this.pvcs.get(keyOf(claim.metadata.namespace, name));
      if (!existing) {
        const res = yield* call({ type: 'ApiCreate', resource: 'persistentvolumeclaims', namespace: claim.metadata.namespace, object: claim });
        if (!isOk(res)) errs.push(`failed to create PVC ${name}: ${statusOf(res).message ?? ''}`);
        if (isOk(res)) this.recorder.event(set, 'Normal', 'SuccessfulCreate', `create Claim ${name} Pod ${pod.metadata.name} in StatefulSet ${setName} success`);
        else if (!isAlreadyExists(res)) {
          this.recorder.event(set, 'Warning', 'FailedCreate', `create Claim ${name} for Pod ${pod.metadata.name} in StatefulSet ${setName} failed error: ${statusOf(res).message ?? ''}`);
        }
      } else if (existing.metadata.deletionTimestamp) errs.push(`pvc ${name} is being deleted`);
    }
    return errs;
  }

  /** `CreateStatefulPod`: claims first, then the pod; AlreadyExists is returned without an event. */
  private *createStatefulPod(set: StatefulSet, pod: Pod, ordinal: number): Sync<SyncError | undefined> {
    const ns = set.metadata.namespace ?? '';
    const claimErrs = yield* this.createPersistentVolumeClaims(set, pod);
    if (claimErrs.length > 0) {
      const text = claimErrs.length === 1 ? claimErrs[0] : `[${claimErrs.join(', ')}]`;
      this.recordPodEvent('create', set, pod, undefined, text);
      return { reason: 'FailedCreate', message: text };
    }
    const res = yield* call({ type: 'ApiCreate', resource: 'pods', namespace: ns, object: pod });
    const created = isOk(res) ? objectOf<Pod>(res) : undefined;
    this.env.trace('controller.sts.create', `${ns}/${set.metadata.name} created pod ${pod.metadata.name}: ${res.code}`, {
      namespace: ns,
      statefulset: set.metadata.name,
      pod: pod.metadata.name,
      ordinal,
      uid: created?.metadata.uid,
      code: res.code,
    });
    if (isAlreadyExists(res)) return syncErrorOf(res, `create pod ${pod.metadata.name}`);
    this.recordPodEvent('create', set, pod, res);
    return created ? undefined : syncErrorOf(res, `create pod ${pod.metadata.name}`);
  }

  /** `UpdateStatefulPod`: restores identity and storage in place (RetryOnConflict over the lister). */
  private *updateStatefulPod(set: StatefulSet, pod0: Pod): Sync<SyncError | undefined> {
    let pod = pod0;
    for (let i = 0; ; i++) {
      const p = deepCopy(pod);
      let consistent = true;
      if (!identityMatches(set, p)) {
        updateIdentity(set, p, getOrdinal(p));
        consistent = false;
      }
      if (!storageMatches(set, p)) {
        updateStorage(set, p);
        consistent = false;
        const errs = yield* this.createPersistentVolumeClaims(set, p);
        if (errs.length > 0) {
          this.recordPodEvent('update', set, p, undefined, errs.join(', '));
          return { reason: 'FailedUpdate', message: errs.join(', ') };
        }
      }
      if (consistent) return undefined;
      const res = yield* call({ type: 'ApiUpdate', resource: 'pods', namespace: p.metadata.namespace, name: p.metadata.name ?? '', object: p });
      if (isOk(res) || !isConflict(res) || i + 1 >= RETRY_ON_CONFLICT_STEPS) {
        this.recordPodEvent('update', set, p, res);
        return isOk(res) ? undefined : syncErrorOf(res, `update pod ${p.metadata.name}`);
      }
      const cached = this.pods.get(objectKey(pod));
      if (!cached) return syncErrorOf(res, `update pod ${p.metadata.name}`);
      pod = cached;
    }
  }

  /**
   * `updateStatefulSetStatus`: completeRollingUpdate, then a status PUT only when it differs
   * (`inconsistentStatus`), retried on conflict against the lister's copy.
   */
  private *updateStatefulSetStatus(set: StatefulSet, status: StatefulSetStatus): Sync<SyncError | undefined> {
    completeRollingUpdate(set, status);
    if (!inconsistentStatus(set, status)) return undefined;
    let cur = set;
    for (let i = 0; ; i++) {
      const res = yield* call({
        type: 'ApiUpdate',
        resource: 'statefulsets',
        namespace: cur.metadata.namespace,
        name: cur.metadata.name ?? '',
        subresource: 'status',
        object: { ...cur, status } as StatefulSet,
      });
      if (isOk(res)) return undefined;
      if (!isConflict(res) || i + 1 >= RETRY_ON_CONFLICT_STEPS) return syncErrorOf(res, 'update statefulset status');
      const cached = this.sets.get(objectKey(cur));
      if (!cached) return syncErrorOf(res, 'update statefulset status');
      cur = cached;
    }
  }
}
