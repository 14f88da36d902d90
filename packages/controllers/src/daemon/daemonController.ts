/**
 * The DaemonSet controller (`pkg/controller/daemon/daemon_controller.go` and `update.go`, v1.22,
 * DaemonSetUpdateSurge Beta on; spec WC §3): informer handlers for DaemonSets, pods and nodes
 * (node add, and node updates that change what `nodeShouldRunDaemonPod` decides), `syncDaemonSet`
 * → `manage` (`podsShouldBeOnNode` per node: create where a pod should run and no pod object
 * exists — a terminating pod blocks the replacement without surge —, delete Failed pods with the
 * failed-pod back-off, excess pods, pods that must not run, unscheduled pods of vanished nodes) →
 * `syncNodes` (slow-start creates of unbound pods carrying the node-name affinity term and the
 * daemon tolerations, parallel deletes) → `rollingUpdate` (maxUnavailable / maxSurge) →
 * `updateDaemonSetStatus`. The revision hash is `ComputeHash(template, collisionCount)`, computed
 * here: ControllerRevision objects are not written (history, `cleanupHistory` and rollback are
 * not modelled). Pods are claimed as `getDaemonPods` does (ControllerRefManager.ClaimPods: matching
 * orphans adopted, owned pods that stopped matching released). Go's map order over nodes in the
 * rolling update is a seeded shuffle.
 */
import type { ApiResult, DaemonSet, DaemonSetStatus, Node, Pod } from '@podsim/api';
import { labelSelectorAsSelector, labelsMatch, seconds, selectorEmpty } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { all, call, hasStatusCause, isNotFound, isOk, objectOf, statusOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import { computeHash } from '../deployment/deploymentUtil.js';
import type { ControllerEnv } from '../env.js';
import { ControllerEventRecorder } from '../events.js';
import { UIDTrackingControllerExpectations } from '../expectations.js';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, type Informer, NAMESPACE_INDEX, namespaceIndexFunc, ORPHAN_NAMESPACE_INDEX, orphanNamespaceIndexFunc } from '../informer.js';
import { getControllerOf, keyOf, mapsEqual, newControllerRef, objectKey, patchOwnerReferences } from '../objects.js';
import { getPodFromTemplate, isPodAvailable, isPodReady } from '../podutil.js';
import { Workers, type SyncResult } from '../workqueue.js';
import {
  allowsSurge,
  compareByCreationTimestampAndPhase,
  createPodTemplate,
  getTargetNodeName,
  getTemplateGeneration,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  replaceDaemonSetPodNodeNameNodeAffinity,
  surgeCount,
  unavailableCount,
} from './daemonUtil.js';

/** `BurstReplicas`: most creations (and, separately, deletions) per sync. */
export const DAEMONSET_BURST_REPLICAS = 250;
/** `--concurrent-daemonset-syncs` default. */
export const CONCURRENT_DAEMONSET_SYNCS = 2;
/** `StatusUpdateRetries`. */
const STATUS_UPDATE_RETRIES = 1;
/** The failed-pod back-off (`flowcontrol.NewBackOff(1s, 15min)` in cmd/kube-controller-manager apps.go). */
export const FAILED_POD_BACKOFF_INITIAL_US = seconds(1);
export const FAILED_POD_BACKOFF_MAX_US = seconds(15 * 60);
const SLOW_START_INITIAL_BATCH_SIZE = 1;
const DS_API_VERSION = 'apps/v1';
const DS_KIND = 'DaemonSet';

/** `flowcontrol.Backoff` without jitter: per-key current back-off and last update (virtual µs). */
export class Backoff {
  private readonly entries = new Map<string, { backoff: number; lastUpdate: number }>();

  constructor(
    readonly initialUs: number,
    readonly maxUs: number,
  ) {}

  private expired(now: number, last: number): boolean {
    return now - last > 2 * this.maxUs;
  }

  /** `IsInBackOffSinceUpdate`. */
  isInBackOffSinceUpdate(id: string, now: number): boolean {
    const e = this.entries.get(id);
    if (!e || this.expired(now, e.lastUpdate)) return false;
    return now - e.lastUpdate < e.backoff;
  }

  /** `Get`: the current back-off (0 when none). */
  get(id: string): number {
    return this.entries.get(id)?.backoff ?? 0;
  }

  /** `Next`: initial, or doubled up to the maximum; records `now`. */
  next(id: string, now: number): void {
    const e = this.entries.get(id);
    if (!e || this.expired(now, e.lastUpdate)) this.entries.set(id, { backoff: this.initialUs, lastUpdate: now });
    else this.entries.set(id, { backoff: Math.min(e.backoff * 2, this.maxUs), lastUpdate: now });
  }

  /** `GC`: drops entries idle for more than twice the maximum. */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (this.expired(now, e.lastUpdate)) this.entries.delete(k);
  }
}

/** What `podsShouldBeOnNode` decides for one node. */
export interface NodeDecision {
  readonly createOn: boolean;
  readonly podsToDelete: readonly Pod[];
  /** A Failed pod waits for its back-off: requeue after this long (µs). */
  readonly requeueAfterUs?: number;
  /** Failed pods reported by `FailedDaemonPod` events. */
  readonly failed: readonly Pod[];
}

/**
 * `podsShouldBeOnNode` (pure): `daemonPods` are every pod object of the set targeting the node
 * (terminating ones included); `inBackoff(pod)` says whether a Failed pod's deletion must wait.
 */
export function podsShouldBeOnNode(
  node: Node,
  daemonPods: readonly Pod[] | undefined,
  ds: DaemonSet,
  hash: string,
  nowUs: number,
  clock: Parameters<typeof isPodAvailable>[3],
  inBackoff: (pod: Pod) => number | undefined,
): NodeDecision {
  const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
  const exists = daemonPods !== undefined;
  const podsToDelete: Pod[] = [];
  const failed: Pod[] = [];
  let requeueAfterUs: number | undefined;
  if (shouldRun && !exists) return { createOn: true, podsToDelete, failed };
  if (shouldContinueRunning) {
    const running: Pod[] = [];
    for (const pod of daemonPods ?? []) {
      if (pod.metadata.deletionTimestamp) continue;
      if (pod.status?.phase === 'Failed') {
        const wait = inBackoff(pod);
        if (wait !== undefined) {
          requeueAfterUs = Math.min(requeueAfterUs ?? wait, wait);
          continue;
        }
        failed.push(pod);
        podsToDelete.push(pod);
      } else running.push(pod);
    }
    const sorted = [...running].sort(compareByCreationTimestampAndPhase);
    if (!allowsSurge(ds)) {
      // Without surge, more than one running pod: keep the oldest.
      podsToDelete.push(...sorted.slice(1));
      return { createOn: false, podsToDelete, failed, requeueAfterUs };
    }
    if (sorted.length <= 1) {
      // Surging: at least one non-deleted pod on the node, even while another terminates.
      return { createOn: sorted.length === 0 && shouldRun, podsToDelete, failed, requeueAfterUs };
    }
    let oldestNew: Pod | undefined;
    let oldestOld: Pod | undefined;
    const generation = undefined; // upstream compares only the hash label here
    for (const pod of sorted) {
      if (isPodUpdated(pod, hash, generation)) {
        if (!oldestNew) {
          oldestNew = pod;
          continue;
        }
      } else if (!oldestOld) {
        oldestOld = pod;
        continue;
      }
      podsToDelete.push(pod);
    }
    if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.spec.minReadySeconds ?? 0, nowUs, clock))) podsToDelete.push(oldestOld);
    return { createOn: false, podsToDelete, failed, requeueAfterUs };
  }
  if (exists) for (const pod of daemonPods ?? []) if (!pod.metadata.deletionTimestamp) podsToDelete.push(pod);
  return { createOn: false, podsToDelete, failed, requeueAfterUs };
}

/** `findUpdatedPodsOnNode`: the node's one new and one old non-terminating pod; ok false with two of a kind. */
export function findUpdatedPodsOnNode(ds: DaemonSet, pods: readonly Pod[], hash: string): { newPod?: Pod; oldPod?: Pod; ok: boolean } {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  const generation = getTemplateGeneration(ds);
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod) return { ok: false };
      newPod = pod;
    } else {
      if (oldPod) return { ok: false };
      oldPod = pod;
    }
  }
  return { newPod, oldPod, ok: true };
}

/**
 * `rollingUpdate`'s decision (pure), over the nodes in `order` (Go map order: the caller
 * shuffles): with maxSurge 0, the old pods to delete (unavailable ones at once, available ones
 * within `maxUnavailable − numUnavailable`); with surge, the nodes to create a new pod on and the
 * old pods whose new pod is available.
 */
export function rollingUpdateDecision(
  ds: DaemonSet,
  nodeToDaemonPods: ReadonlyMap<string, readonly Pod[]>,
  order: readonly string[],
  hash: string,
  maxSurge: number,
  maxUnavailable: number,
  available: (p: Pod) => boolean,
): { oldPodsToDelete: Pod[]; newNodesToCreate: string[] } {
  if (maxSurge === 0) {
    let numUnavailable = 0;
    const allowedReplacementPods: Pod[] = [];
    const candidatePodsToDelete: Pod[] = [];
    for (const nodeName of order) {
      const { newPod, oldPod, ok } = findUpdatedPodsOnNode(ds, nodeToDaemonPods.get(nodeName) ?? [], hash);
      if (!ok) {
        numUnavailable++;
        continue;
      }
      if ((!oldPod && !newPod) || (oldPod && newPod)) numUnavailable++;
      else if (newPod) {
        if (!available(newPod)) numUnavailable++;
      } else if (oldPod) {
        if (!available(oldPod)) allowedReplacementPods.push(oldPod);
        else if (numUnavailable >= maxUnavailable) continue;
        else candidatePodsToDelete.push(oldPod);
      }
    }
    const remaining = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidatePodsToDelete.length);
    return { oldPodsToDelete: [...allowedReplacementPods, ...candidatePodsToDelete.slice(0, remaining)], newNodesToCreate: [] };
  }
  const oldPodsToDelete: Pod[] = [];
  const candidateNewNodes: string[] = [];
  const allowedNewNodes: string[] = [];
  let numSurge = 0;
  for (const nodeName of order) {
    const { newPod, oldPod, ok } = findUpdatedPodsOnNode(ds, nodeToDaemonPods.get(nodeName) ?? [], hash);
    if (!ok) {
      numSurge++;
      continue;
    }
    if (!oldPod) continue;
    if (!newPod) {
      if (!available(oldPod)) allowedNewNodes.push(nodeName);
      else if (numSurge >= maxSurge) continue;
      else candidateNewNodes.push(nodeName);
    } else if (!available(newPod)) numSurge++;
    else oldPodsToDelete.push(oldPod);
  }
  const remaining = Math.min(Math.max(0, maxSurge - numSurge), candidateNewNodes.length);
  return { oldPodsToDelete, newNodesToCreate: [...allowedNewNodes, ...candidateNewNodes.slice(0, remaining)] };
}

export interface DaemonSetsControllerOptions {
  readonly workers?: number;
  readonly burstReplicas?: number;
}

export class DaemonSetsController {
  readonly expectations = new UIDTrackingControllerExpectations();
  readonly workers: Workers;
  readonly recorder: ControllerEventRecorder;
  readonly failedPodsBackoff = new Backoff(FAILED_POD_BACKOFF_INITIAL_US, FAILED_POD_BACKOFF_MAX_US);
  private readonly burstReplicas: number;

  constructor(
    private readonly env: ControllerEnv,
    private readonly dss: Informer<DaemonSet>,
    private readonly pods: Informer<Pod>,
    private readonly nodes: Informer<Node>,
    private readonly client: ApiClient,
    opts: DaemonSetsControllerOptions = {},
  ) {
    this.burstReplicas = opts.burstReplicas ?? DAEMONSET_BURST_REPLICAS;
    this.recorder = new ControllerEventRecorder(env, client, 'daemonset-controller');
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_DAEMONSET_SYNCS, (key) => this.syncDaemonSet(key), client.sender);
    pods.addIndexer(CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    pods.addIndexer(ORPHAN_NAMESPACE_INDEX, orphanNamespaceIndexFunc);
    dss.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
    pods.addEventHandler({ onAdd: (p) => this.addPod(p), onUpdate: (o, p) => this.updatePod(o, p), onDelete: (p) => this.deletePod(p) });
    dss.addEventHandler({
      onAdd: (ds) => this.enqueue(ds),
      onUpdate: (_o, ds) => this.enqueue(ds),
      onDelete: (ds) => {
        this.expectations.deleteExpectations(objectKey(ds));
        this.enqueue(ds);
      },
    });
    nodes.addEventHandler({ onAdd: (n) => this.addNode(n), onUpdate: (o, n) => this.updateNode(o, n) });
  }

  private enqueue(ds: DaemonSet): void {
    this.workers.queue.add(objectKey(ds));
  }

  private resolveControllerRef(namespace: string | undefined, ref: { kind: string; name: string; uid: string } | undefined): DaemonSet | undefined {
    if (!ref || ref.kind !== DS_KIND) return undefined;
    const ds = this.dss.get(keyOf(namespace, ref.name));
    return ds && ds.metadata.uid === ref.uid ? ds : undefined;
  }

  // ---- informer handlers ------------------------------------------------------------------

  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      this.deletePod(pod);
      return;
    }
    const ref = getControllerOf(pod);
    if (!ref) {
      // An orphan: every set that selects it is synced, to see whether one adopts it (no
      // creation is observed: no controller waits for an orphan).
      for (const ds of this.getDaemonSetsForPod(pod)) this.enqueue(ds);
      return;
    }
    const ds = this.resolveControllerRef(pod.metadata.namespace, ref);
    if (!ds) return;
    this.expectations.creationObserved(objectKey(ds));
    this.enqueue(ds);
  }

  /** `getDaemonSetsForPod` (`GetPodDaemonSets`): the sets in the pod's namespace whose selector matches its labels. */
  private getDaemonSetsForPod(pod: Pod): DaemonSet[] {
    const out: DaemonSet[] = [];
    for (const ds of this.dss.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '')) {
      const sel = labelSelectorAsSelector(ds.spec.selector);
      if ('error' in sel || selectorEmpty(sel)) continue;
      if (labelsMatch(sel, pod.metadata.labels)) out.push(ds);
    }
    return out.sort((a, b) => (objectKey(a) < objectKey(b) ? -1 : 1));
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (cur.metadata.resourceVersion === old.metadata.resourceVersion) return;
    if (cur.metadata.deletionTimestamp) {
      this.deletePod(cur);
      return;
    }
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = oldRef?.uid !== curRef?.uid;
    if (oldRef && refChanged) {
      const o = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (o) this.enqueue(o);
    }
    if (!curRef) {
      // An orphan whose labels or owner changed: the sets that select it may adopt it.
      if (refChanged || !mapsEqual(old.metadata.labels, cur.metadata.labels)) for (const d of this.getDaemonSetsForPod(cur)) this.enqueue(d);
      return;
    }
    const ds = this.resolveControllerRef(cur.metadata.namespace, curRef);
    if (!ds) return;
    this.enqueue(ds);
    const minReady = ds.spec.minReadySeconds ?? 0;
    // Requeue after minReadySeconds (+1 s against clock skew) when the pod turned ready.
    if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.workers.queue.addAfter(objectKey(ds), seconds(minReady) + seconds(1));
  }

  private deletePod(pod: Pod): void {
    const ds = this.resolveControllerRef(pod.metadata.namespace, getControllerOf(pod));
    if (!ds) return;
    this.expectations.deletionObserved(objectKey(ds), objectKey(pod));
    this.enqueue(ds);
  }

  /** `addNode`: every set that should run a pod on the new node. */
  private addNode(node: Node): void {
    for (const ds of this.dss.values()) if (nodeShouldRunDaemonPod(node, ds).shouldRun) this.enqueue(ds);
  }

  /** `updateNode`: sets whose decision for the node changed (heartbeat-only updates are ignored). */
  private updateNode(old: Node, cur: Node): void {
    if (shouldIgnoreNodeUpdate(old, cur)) return;
    for (const ds of this.dss.values()) {
      const a = nodeShouldRunDaemonPod(old, ds);
      const b = nodeShouldRunDaemonPod(cur, ds);
      if (a.shouldRun !== b.shouldRun || a.shouldContinueRunning !== b.shouldContinueRunning) this.enqueue(ds);
    }
  }

  // ---- sync -------------------------------------------------------------------------------

  /**
   * `getDaemonPods`: ControllerRefManager.ClaimPods over the namespace's pods, from the informer
   * cache. Owned pods that match the selector stay (terminating ones included); owned pods that
   * no longer match are released (a merge patch of their ownerReferences, unless being deleted);
   * matching orphans that are not being deleted are adopted, after one fresh GET of the set
   * (`RecheckDeletionTimestamp`: not adopted when it is gone, replaced or being deleted). Each
   * caller claims again, as upstream's three calls do; the cache may not show the last adoption yet.
   */
  private *getDaemonPods(ds: DaemonSet): Sync<{ pods: Pod[]; error?: SyncError }> {
    const sel = labelSelectorAsSelector(ds.spec.selector);
    const owned = this.pods.byIndex(CONTROLLER_UID_INDEX, ds.metadata.uid ?? '');
    if ('error' in sel) return { pods: owned };
    const pods: Pod[] = [];
    const release: Pod[] = [];
    for (const p of owned) {
      if (labelsMatch(sel, p.metadata.labels) || p.metadata.deletionTimestamp) pods.push(p);
      else release.push(p);
    }
    const orphans = this.pods.byIndex(ORPHAN_NAMESPACE_INDEX, ds.metadata.namespace ?? '').filter((p) => !p.metadata.deletionTimestamp && labelsMatch(sel, p.metadata.labels));
    let adopt = orphans;
    if (orphans.length > 0) {
      const got: ApiResult = yield* call({ type: 'ApiGet', resource: 'daemonsets', namespace: ds.metadata.namespace, name: ds.metadata.name ?? '' });
      if (!isOk(got)) return { pods, error: syncErrorOf(got, 'recheck daemon set before adopting') };
      const fresh = objectOf<DaemonSet>(got);
      if (fresh.metadata.uid !== ds.metadata.uid || fresh.metadata.deletionTimestamp) adopt = [];
    }
    if (release.length === 0 && adopt.length === 0) return { pods };
    const ref = newControllerRef(ds, DS_API_VERSION, DS_KIND);
    const reqs = [
      ...release.map((p) => patchOwnerReferences('pods', p, (p.metadata.ownerReferences ?? []).filter((r) => r.uid !== ds.metadata.uid))),
      ...adopt.map((p) => patchOwnerReferences('pods', p, [...(p.metadata.ownerReferences ?? []), ref])),
    ];
    const results = yield* all(reqs);
    let error: SyncError | undefined;
    results.forEach((res, i) => {
      const adopting = i >= release.length;
      const p = adopting ? adopt[i - release.length] : release[i];
      this.env.trace('controller.ds.claim', `${objectKey(ds)} ${adopting ? 'adopted' : 'released'} pod ${p.metadata.name}: ${res.code}`, { daemonset: objectKey(ds), pod: p.metadata.name, adopted: adopting, code: res.code });
      if (isOk(res)) {
        if (adopting) pods.push(objectOf<Pod>(res));
      } else if (!isNotFound(res)) error ??= syncErrorOf(res, adopting ? 'adopt pod' : 'release pod');
    });
    return { pods, error };
  }

  /** `getNodesToDaemonPods`: the claimed pods (terminating ones included) by target node. */
  private *getNodesToDaemonPods(ds: DaemonSet): Sync<{ byNode: Map<string, Pod[]>; error?: SyncError }> {
    const claimed = yield* this.getDaemonPods(ds);
    if (claimed.error) return { byNode: new Map(), error: claimed.error };
    return { byNode: groupByTargetNode(claimed.pods) };
  }

  private nodeList(): Node[] {
    return [...this.nodes.values()].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  }

  /** `syncDaemonSet(key)`. */
  *syncDaemonSet(key: string): Sync<SyncResult> {
    const ds = this.dss.get(key);
    if (!ds) {
      this.expectations.deleteExpectations(key);
      return undefined;
    }
    const nodeList = this.nodeList();
    const sel = labelSelectorAsSelector(ds.spec.selector);
    if ('error' in sel) return undefined;
    if (selectorEmpty(sel)) {
      this.recorder.event(ds, 'Warning', 'SelectingAll', 'This daemon set is selecting all pods. A non-empty selector is required.');
      return undefined;
    }
    // Don't process a DaemonSet until all its pods have been deleted.
    if (ds.metadata.deletionTimestamp) return undefined;
    const hash = computeHash(ds.spec.template, ds.status?.collisionCount);
    if (!this.expectations.satisfiedExpectations(key, this.env.now)) return yield* this.updateDaemonSetStatus(ds, nodeList, hash, false);
    const m = yield* this.manage(ds, nodeList, hash);
    const requeueAfterUs = m.requeueAfterUs;
    let err = m.error;
    // Process rolling updates only once all pod creations and deletions were observed.
    if (!err && this.expectations.satisfiedExpectations(key, this.env.now) && (ds.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
      err = yield* this.rollingUpdate(ds, nodeList, hash);
    }
    const st = yield* this.updateDaemonSetStatus(ds, nodeList, hash, true);
    if (err) return err;
    if (st) return st;
    return requeueAfterUs !== undefined ? { requeueAfterUs } : undefined;
  }

  /** `manage`: per-node decisions, unscheduled pods of vanished nodes, then `syncNodes`. */
  private *manage(ds: DaemonSet, nodeList: readonly Node[], hash: string): Sync<{ error?: SyncError; requeueAfterUs?: number }> {
    const got = yield* this.getNodesToDaemonPods(ds);
    if (got.error) return { error: got.error };
    const nodeToDaemonPods = got.byNode;
    const create: string[] = [];
    const del: Pod[] = [];
    let requeueAfterUs: number | undefined;
    const gen = ds.status?.observedGeneration ?? 0;
    for (const node of nodeList) {
      const nodeName = node.metadata.name ?? '';
      const backoffKey = `${ds.metadata.uid}/${gen}/${nodeName}`;
      const d = podsShouldBeOnNode(node, nodeToDaemonPods.get(nodeName), ds, hash, this.env.now, this.env.clock, () =>
        this.failedPodsBackoff.isInBackOffSinceUpdate(backoffKey, this.env.now) ? this.failedPodsBackoff.get(backoffKey) : undefined,
      );
      for (const pod of d.failed) {
        this.failedPodsBackoff.next(backoffKey, this.env.now);
        this.recorder.event(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to kill it`);
      }
      if (d.createOn) create.push(nodeName);
      del.push(...d.podsToDelete);
      if (d.requeueAfterUs !== undefined) requeueAfterUs = Math.min(requeueAfterUs ?? d.requeueAfterUs, d.requeueAfterUs);
    }
    // getUnscheduledPodsWithoutNode: unbound pods whose target node left the lister.
    const running = new Set(nodeList.map((n) => n.metadata.name ?? ''));
    for (const [n, pods] of nodeToDaemonPods) if (!running.has(n)) for (const p of pods) if (!p.spec.nodeName) del.push(p);
    this.failedPodsBackoff.gc(this.env.now);
    const error = yield* this.syncNodes(ds, del, create, hash);
    return { error, requeueAfterUs };
  }

  /**
   * `syncNodes`: expectations first, then creates (slow start 1, 2, 4, …, at most
   * burstReplicas) of unbound pods targeting each node through the node-name affinity term, and
   * parallel deletes (empty DeleteOptions: each pod's own grace, 0 for terminal or unscheduled).
   */
  private *syncNodes(ds: DaemonSet, podsToDelete: readonly Pod[], nodesNeedingDaemonPods: readonly string[], hash: string): Sync<SyncError | undefined> {
    const key = objectKey(ds);
    const createDiff = Math.min(nodesNeedingDaemonPods.length, this.burstReplicas);
    const toDelete = podsToDelete.slice(0, this.burstReplicas);
    if (createDiff === 0 && toDelete.length === 0) return undefined;
    this.expectations.setExpectations(
      key,
      createDiff,
      toDelete.map((p) => objectKey(p)),
      this.env.now,
    );
    const ns = ds.metadata.namespace ?? '';
    const name = ds.metadata.name ?? '';
    const template = createPodTemplate(ds.spec.template, getTemplateGeneration(ds), hash);
    const ref = newControllerRef(ds, DS_API_VERSION, DS_KIND);
    let error: SyncError | undefined;
    let pos = 0;
    for (let batch = Math.min(createDiff, SLOW_START_INITIAL_BATCH_SIZE); createDiff > pos; ) {
      const nodesOfBatch = nodesNeedingDaemonPods.slice(pos, pos + batch);
      const reqs = nodesOfBatch.map((nodeName) => {
        const spec = { ...template.spec, affinity: replaceDaemonSetPodNodeNameNodeAffinity(template.spec.affinity, nodeName) };
        return { type: 'ApiCreate' as const, resource: 'pods' as const, namespace: ns, object: getPodFromTemplate({ ...template, spec }, name, ref) };
      });
      const results = yield* all(reqs);
      let batchFailed = false;
      results.forEach((res, i) => {
        if (isOk(res)) {
          const pod = objectOf<Pod>(res);
          this.env.trace('controller.ds.create', `${ns}/${name} created pod ${pod.metadata.name} for node ${nodesOfBatch[i]}`, { daemonset: name, namespace: ns, pod: pod.metadata.name, uid: pod.metadata.uid, node: nodesOfBatch[i] });
          this.recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
          return;
        }
        if (hasStatusCause(res, 'NamespaceTerminating')) return;
        this.recorder.event(ds, 'Warning', 'FailedCreate', `Error creating: ${statusOf(res).message ?? `HTTP ${res.code}`}`);
        this.expectations.creationObserved(key);
        batchFailed = true;
        error ??= syncErrorOf(res, 'create pod');
      });
      const skipped = createDiff - (batch + pos);
      if (batchFailed && skipped > 0) {
        for (let i = 0; i < skipped; i++) this.expectations.creationObserved(key);
        break;
      }
      pos += batch;
      batch = Math.min(2 * batch, createDiff - pos);
    }
    if (toDelete.length > 0) {
      const results = yield* all(toDelete.map((p) => ({ type: 'ApiDelete' as const, resource: 'pods' as const, namespace: ns, name: p.metadata.name ?? '', options: {} })));
      results.forEach((res, i) => {
        const p = toDelete[i];
        this.env.trace('controller.ds.delete', `${ns}/${name} deleted pod ${p.metadata.name}: ${res.code}`, { daemonset: name, namespace: ns, pod: p.metadata.name, uid: p.metadata.uid, code: res.code });
        if (isOk(res)) {
          this.recorder.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
          return;
        }
        this.expectations.deletionObserved(key, objectKey(p));
        if (!isNotFound(res)) {
          this.recorder.event(ds, 'Warning', 'FailedDelete', `Error deleting: ${statusOf(res).message ?? `HTTP ${res.code}`}`);
          error ??= syncErrorOf(res, 'delete pod');
        }
      });
    }
    return error;
  }

  /** `rollingUpdate` (update.go): the decision over a seeded shuffle of the nodes, then `syncNodes`. */
  private *rollingUpdate(ds: DaemonSet, nodeList: readonly Node[], hash: string): Sync<SyncError | undefined> {
    const got = yield* this.getNodesToDaemonPods(ds);
    if (got.error) return got.error;
    const nodeToDaemonPods = got.byNode;
    // updatedDesiredNodeCounts.
    let desired = 0;
    for (const node of nodeList) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
      desired++;
      if (!nodeToDaemonPods.has(node.metadata.name ?? '')) nodeToDaemonPods.set(node.metadata.name ?? '', []);
    }
    let maxUnavailable = unavailableCount(ds, desired);
    const maxSurge = surgeCount(ds, desired);
    if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
    const order = [...nodeToDaemonPods.keys()].sort();
    const rng = this.env.stream('daemonset-rolling-update');
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    const minReady = ds.spec.minReadySeconds ?? 0;
    const d = rollingUpdateDecision(ds, nodeToDaemonPods, order, hash, maxSurge, maxUnavailable, (p) => isPodAvailable(p, minReady, this.env.now, this.env.clock));
    return yield* this.syncNodes(ds, d.oldPodsToDelete, d.newNodesToCreate, hash);
  }

  /** `updateDaemonSetStatus` + `storeDaemonSetStatus` (skipped when unchanged; one GET-and-retry). */
  private *updateDaemonSetStatus(ds: DaemonSet, nodeList: readonly Node[], hash: string, updateObservedGen: boolean): Sync<SyncResult> {
    const got = yield* this.getNodesToDaemonPods(ds);
    if (got.error) return got.error;
    const nodeToDaemonPods = got.byNode;
    const minReady = ds.spec.minReadySeconds ?? 0;
    const generation = getTemplateGeneration(ds);
    const s = { desired: 0, current: 0, misscheduled: 0, ready: 0, updated: 0, available: 0 };
    for (const node of nodeList) {
      const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
      const pods = nodeToDaemonPods.get(node.metadata.name ?? '') ?? [];
      const scheduled = pods.length > 0;
      if (!shouldRun) {
        if (scheduled) s.misscheduled++;
        continue;
      }
      s.desired++;
      if (!scheduled) continue;
      s.current++;
      const pod = [...pods].sort(compareByCreationTimestampAndPhase)[0];
      if (isPodReady(pod)) {
        s.ready++;
        if (isPodAvailable(pod, minReady, this.env.now, this.env.clock)) s.available++;
      }
      if (isPodUpdated(pod, hash, generation)) s.updated++;
    }
    let status: DaemonSetStatus = {
      ...(ds.status ?? {}),
      desiredNumberScheduled: s.desired,
      currentNumberScheduled: s.current,
      numberMisscheduled: s.misscheduled,
      numberReady: s.ready,
      updatedNumberScheduled: s.updated,
      numberAvailable: s.available,
      numberUnavailable: s.desired - s.available,
    };
    if (updateObservedGen) status.observedGeneration = ds.metadata.generation;
    const old = ds.status;
    const same =
      old !== undefined &&
      (old.observedGeneration ?? 0) >= (ds.metadata.generation ?? 0) &&
      old.desiredNumberScheduled === status.desiredNumberScheduled &&
      old.currentNumberScheduled === status.currentNumberScheduled &&
      old.numberMisscheduled === status.numberMisscheduled &&
      old.numberReady === status.numberReady &&
      (old.updatedNumberScheduled ?? 0) === status.updatedNumberScheduled &&
      (old.numberAvailable ?? 0) === status.numberAvailable &&
      (old.numberUnavailable ?? 0) === status.numberUnavailable;
    let result: SyncResult;
    if (!same) {
      let cur = ds;
      for (let i = 0; ; i++) {
        const res: ApiResult = yield* call({ type: 'ApiUpdate', resource: 'daemonsets', namespace: cur.metadata.namespace, name: cur.metadata.name ?? '', subresource: 'status', object: { ...cur, status } as DaemonSet });
        if (isOk(res)) break;
        if (i >= STATUS_UPDATE_RETRIES) {
          result = syncErrorOf(res, 'update daemonset status');
          break;
        }
        const got: ApiResult = yield* call({ type: 'ApiGet', resource: 'daemonsets', namespace: cur.metadata.namespace, name: cur.metadata.name ?? '' });
        if (!isOk(got)) {
          result = syncErrorOf(got, 'get daemonset');
          break;
        }
        cur = objectOf<DaemonSet>(got);
        // A fresh status: the one already sent is the request body, shared with the apiserver.
        if (updateObservedGen) status = { ...status, observedGeneration: cur.metadata.generation };
      }
    }
    // Resync after minReadySeconds as a last line of defence against clock skew.
    if (minReady > 0 && s.ready !== s.available) this.workers.queue.addAfter(objectKey(ds), seconds(minReady));
    return result;
  }
}

/** `shouldIgnoreNodeUpdate`: only status heartbeats / condition times changed (labels, taints and unschedulable did not). */
export function shouldIgnoreNodeUpdate(old: Node, cur: Node): boolean {
  return (
    mapsEqual(old.metadata.labels, cur.metadata.labels) &&
    JSON.stringify(old.spec?.taints ?? []) === JSON.stringify(cur.spec?.taints ?? []) &&
    (old.spec?.unschedulable ?? false) === (cur.spec?.unschedulable ?? false)
  );
}

/** Pods by the node they run on or target (`util.GetTargetNodeName`), each list by key. */
function groupByTargetNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const pod of pods) {
    const node = getTargetNodeName(pod);
    if (node === undefined) continue;
    let l = out.get(node);
    if (!l) out.set(node, (l = []));
    l.push(pod);
  }
  for (const l of out.values()) l.sort((a, b) => (objectKey(a) < objectKey(b) ? -1 : 1));
  return out;
}
