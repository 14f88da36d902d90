/**
 * The disruption controller: kubernetes v1.22 `pkg/controller/disruption/disruption.go`. It keeps
 * each PodDisruptionBudget's status current: the pods its selector matches (nil selector: none;
 * `{}`: all of the namespace), `expectedPods` (the summed `spec.replicas` of the pods' controllers
 * — a Deployment for pods of a Deployment's ReplicaSet, else the ReplicaSet — when maxUnavailable
 * or a percentage minAvailable is set; else the number of matching pods), `desiredHealthy`,
 * `currentHealthy` (Ready pods neither deleting nor recently evicted), `disruptionsAllowed` =
 * max(0, currentHealthy − desiredHealthy) (0 while expectedPods is 0) and `disruptedPods`, whose
 * entries expire `DeletionTimeout` (2 min) after the eviction (the budget is rechecked then).
 * A failed computation writes the fail-safe status (0 allowed, condition SyncFailed); a write
 * conflict is retried rate-limited. One worker, as upstream. Not modelled: events
 * (NoPods, UnmanagedPods, NotDeleted, …), StatefulSets, ReplicationControllers and the generic
 * scale-subresource finder (pods of those kinds count as having no controller found).
 */
import type { ApiResult, Deployment, Pod, PodDisruptionBudget, PodDisruptionBudgetStatus, ReplicaSet, Status, VirtualTime } from '@podsim/api';
import { DISRUPTION_ALLOWED_CONDITION, SYNC_FAILED_REASON, conditionsAreUpToDate, deepEqual, labelSelectorAsSelector, labelsMatch, seconds, setStatusCondition, updateDisruptionAllowedCondition } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { type Sync, type SyncError, call } from '../coroutine.js';
import { type ControllerEnv, nowTimestamp, parseTimestamp } from '../env.js';
import type { Informer } from '../informer.js';
import { getScaledValueFromIntOrPercent } from '../intstr.js';
import { deepCopy, getControllerOf, keyOf, objectKey } from '../objects.js';
import { isPodReady } from '../podutil.js';
import { type SyncResult, Workers } from '../workqueue.js';

/** `DeletionTimeout`: how long an evicted pod may take to get its deletionTimestamp. */
export const DELETION_TIMEOUT_US = seconds(120);

/** The pod selection of a budget (`LabelSelectorAsSelector`; a bad selector is an error). */
function podsForPdb(pdb: PodDisruptionBudget, pods: Informer<Pod>): Pod[] | string {
  const sel = labelSelectorAsSelector(pdb.spec?.selector);
  if ('error' in sel) return sel.error;
  const out: Pod[] = [];
  for (const p of pods.values()) if (p.metadata.namespace === pdb.metadata.namespace && labelsMatch(sel, p.metadata.labels)) out.push(p);
  return out;
}

/** `countHealthyPods`: Ready pods that are not deleting and not awaiting an eviction's delete. */
export function countHealthyPods(pods: readonly Pod[], disruptedPods: Readonly<Record<string, string>>, now: VirtualTime, parse: (ts: string) => VirtualTime | undefined): number {
  let healthy = 0;
  for (const pod of pods) {
    // Pod is being deleted.
    if (pod.metadata.deletionTimestamp) continue;
    // Pod is expected to be deleted soon.
    const at = disruptedPods[pod.metadata.name ?? ''];
    const t = at !== undefined ? parse(at) : undefined;
    if (t !== undefined && t + DELETION_TIMEOUT_US > now) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
}

function statusError(st: Status, key: string): SyncError {
  return { reason: st.reason ?? 'Unknown', code: st.code, message: `update status of PodDisruptionBudget ${key}: ${st.message ?? `HTTP ${st.code}`}` };
}

export class DisruptionController {
  readonly workers: Workers;

  constructor(
    private readonly env: ControllerEnv,
    private readonly pdbs: Informer<PodDisruptionBudget>,
    private readonly pods: Informer<Pod>,
    private readonly rss: Informer<ReplicaSet>,
    private readonly deployments: Informer<Deployment>,
    client: ApiClient,
  ) {
    this.workers = new Workers(env, 1, (key) => this.sync(key), client.sender);
    pdbs.addEventHandler({
      onAdd: (pdb) => this.enqueuePdb(pdb),
      onUpdate: (_old, pdb) => this.enqueuePdb(pdb),
      onDelete: (pdb) => this.enqueuePdb(pdb),
    });
    pods.addEventHandler({
      onAdd: (pod) => this.enqueuePdbForPod(pod),
      onUpdate: (_old, pod) => this.enqueuePdbForPod(pod),
      onDelete: (pod) => this.enqueuePdbForPod(pod),
    });
  }

  private enqueuePdb(pdb: PodDisruptionBudget): void {
    this.workers.queue.add(objectKey(pdb));
  }

  /** `getPdbForPod`: the first budget of the pod's namespace whose selector matches it (policy/v1: `{}` matches all). */
  private enqueuePdbForPod(pod: Pod): void {
    for (const pdb of this.pdbs.values()) {
      if (pdb.metadata.namespace !== pod.metadata.namespace) continue;
      const sel = labelSelectorAsSelector(pdb.spec?.selector);
      if ('error' in sel || !labelsMatch(sel, pod.metadata.labels)) continue;
      this.enqueuePdb(pdb);
      return;
    }
  }

  /** `sync`: the lister's budget (gone → done), trySync, and the fail-safe status on a non-conflict error. */
  *sync(key: string): Sync<SyncResult> {
    const pdb = this.pdbs.get(key);
    if (!pdb) return undefined;
    const res = yield* this.trySync(pdb);
    if (res === undefined) return undefined;
    // If the reason for failure was a conflict, the key is requeued without the fail-safe.
    if (typeof res !== 'string' && res.reason === 'Conflict') return statusError(res, key);
    return yield* this.failSafe(pdb, typeof res === 'string' ? res : (res.message ?? `HTTP ${res.code}`));
  }

  /** `trySync`: recompute and write the status. Returns a computation error (string) or a failed write. */
  private *trySync(pdb: PodDisruptionBudget): Sync<string | Status | undefined> {
    const pods = podsForPdb(pdb, this.pods);
    if (typeof pods === 'string') return pods;
    const expected = this.getExpectedPodCount(pdb, pods);
    if (typeof expected === 'string') return expected;
    const now = this.env.now;
    const { disruptedPods, recheckUs } = this.buildDisruptedPodMap(pods, pdb, now);
    const currentHealthy = countHealthyPods(pods, disruptedPods, now, (ts) => parseTimestamp(this.env, ts));
    const res = yield* this.updatePdbStatus(pdb, currentHealthy, expected.desiredHealthy, expected.expectedCount, disruptedPods);
    if (res === undefined && recheckUs !== undefined) this.workers.queue.addAfter(objectKey(pdb), Math.max(0, recheckUs - now));
    return res;
  }

  /** `getExpectedPodCount`: expectedCount and desiredHealthy, or an error message. */
  getExpectedPodCount(pdb: PodDisruptionBudget, pods: readonly Pod[]): { expectedCount: number; desiredHealthy: number } | string {
    const { maxUnavailable, minAvailable } = pdb.spec ?? {};
    if (maxUnavailable !== undefined) {
      const expectedCount = this.getExpectedScale(pdb, pods);
      if (typeof expectedCount === 'string') return expectedCount;
      const mu = getScaledValueFromIntOrPercent(maxUnavailable, expectedCount, true);
      if (typeof mu === 'string') return mu;
      return { expectedCount, desiredHealthy: Math.max(0, expectedCount - mu) };
    }
    if (minAvailable !== undefined) {
      if (typeof minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: minAvailable };
      const expectedCount = this.getExpectedScale(pdb, pods);
      if (typeof expectedCount === 'string') return expectedCount;
      const ma = getScaledValueFromIntOrPercent(minAvailable, expectedCount, true);
      if (typeof ma === 'string') return ma;
      return { expectedCount, desiredHealthy: ma };
    }
    return { expectedCount: 0, desiredHealthy: 0 };
  }

  /**
   * `getExpectedScale`: the sum of the scales of the pods' controllers (each counted once).
   * Pods without a controller are unmanaged and skipped; a controller podsim does not know is an error.
   */
  private getExpectedScale(pdb: PodDisruptionBudget, pods: readonly Pod[]): number | string {
    const controllerScale = new Map<string, number>();
    for (const pod of pods) {
      const ref = getControllerOf(pod);
      if (!ref) continue;
      if (controllerScale.has(ref.uid)) continue;
      const found = this.getPodDeployment(ref, pdb.metadata.namespace) ?? this.getPodReplicaSet(ref, pdb.metadata.namespace);
      if (!found) return `found no controllers for pod ${JSON.stringify(pod.metadata.name)}`;
      controllerScale.set(found.uid, found.scale);
    }
    let total = 0;
    for (const n of controllerScale.values()) total += n;
    return total;
  }

  private replicaSetOf(ref: { kind: string; apiVersion: string; name: string; uid: string }, namespace: string | undefined): ReplicaSet | undefined {
    if (ref.kind !== 'ReplicaSet' || !/^(apps|extensions)\//.test(ref.apiVersion)) return undefined;
    const rs = this.rss.get(keyOf(namespace, ref.name));
    return rs && rs.metadata.uid === ref.uid ? rs : undefined;
  }

  /** `getPodReplicaSet`: a ReplicaSet not controlled by a Deployment. */
  private getPodReplicaSet(ref: { kind: string; apiVersion: string; name: string; uid: string }, namespace: string | undefined): { uid: string; scale: number } | undefined {
    const rs = this.replicaSetOf(ref, namespace);
    if (!rs) return undefined;
    // Skip RS if it's controlled by a Deployment.
    if (getControllerOf(rs)?.kind === 'Deployment') return undefined;
    return { uid: rs.metadata.uid ?? '', scale: rs.spec.replicas ?? 1 };
  }

  /** `getPodDeployment`: the Deployment controlling the pod's ReplicaSet. */
  private getPodDeployment(ref: { kind: string; apiVersion: string; name: string; uid: string }, namespace: string | undefined): { uid: string; scale: number } | undefined {
    const rs = this.replicaSetOf(ref, namespace);
    const dref = rs && getControllerOf(rs);
    if (!dref || dref.kind !== 'Deployment' || !/^(apps|extensions)\//.test(dref.apiVersion)) return undefined;
    const d = this.deployments.get(keyOf(namespace, dref.name));
    if (!d || d.metadata.uid !== dref.uid) return undefined;
    return { uid: d.metadata.uid, scale: d.spec.replicas ?? 1 };
  }

  /**
   * `buildDisruptedPodMap`: the entries of status.disruptedPods still awaiting their pod's
   * deletion (an entry older than DeletionTimeout is dropped), and when the earliest expires.
   */
  private buildDisruptedPodMap(pods: readonly Pod[], pdb: PodDisruptionBudget, now: VirtualTime): { disruptedPods: Record<string, string>; recheckUs?: VirtualTime } {
    const disrupted = pdb.status?.disruptedPods;
    const result: Record<string, string> = {};
    let recheckUs: VirtualTime | undefined;
    if (!disrupted) return { disruptedPods: result };
    for (const pod of pods) {
      // Already being deleted.
      if (pod.metadata.deletionTimestamp) continue;
      const name = pod.metadata.name ?? '';
      const at = disrupted[name];
      if (at === undefined) continue;
      const t = parseTimestamp(this.env, at);
      if (t === undefined) continue;
      const expectedDeletion = t + DELETION_TIMEOUT_US;
      // A pod expected to be deleted by now but still here no longer counts as disrupted.
      if (expectedDeletion < now) continue;
      if (recheckUs === undefined || expectedDeletion < recheckUs) recheckUs = expectedDeletion;
      result[name] = at;
    }
    return { disruptedPods: result, recheckUs };
  }

  /** `updatePdbStatus`: writes the status when any figure, the generation or the condition changed. */
  private *updatePdbStatus(pdb: PodDisruptionBudget, currentHealthy: number, desiredHealthy: number, expectedPods: number, disruptedPods: Record<string, string>): Sync<Status | undefined> {
    // expectedCount > 0 keeps budgets matching no pods safe when their first pods appear.
    let disruptionsAllowed = currentHealthy - desiredHealthy;
    if (expectedPods <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
    const st = pdb.status;
    if (
      st &&
      st.currentHealthy === currentHealthy &&
      st.desiredHealthy === desiredHealthy &&
      st.expectedPods === expectedPods &&
      st.disruptionsAllowed === disruptionsAllowed &&
      deepEqual(st.disruptedPods ?? {}, disruptedPods) &&
      st.observedGeneration === pdb.metadata.generation &&
      conditionsAreUpToDate(pdb)
    ) {
      return undefined;
    }
    const status: PodDisruptionBudgetStatus = {
      currentHealthy,
      desiredHealthy,
      expectedPods,
      disruptionsAllowed,
      ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
      observedGeneration: pdb.metadata.generation,
      ...(st?.conditions ? { conditions: st.conditions } : {}),
    };
    updateDisruptionAllowedCondition(status, nowTimestamp(this.env));
    return yield* this.update(pdb, status);
  }

  /** `failSafe`: no disruptions allowed, condition DisruptionAllowed False / SyncFailed with the error. */
  private *failSafe(pdb: PodDisruptionBudget, err: string): Sync<SyncResult> {
    const old = pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    const conditions = [...(old.conditions ?? [])];
    setStatusCondition(
      conditions,
      {
        type: DISRUPTION_ALLOWED_CONDITION,
        status: 'False',
        reason: SYNC_FAILED_REASON,
        message: err,
        ...(old.observedGeneration !== undefined ? { observedGeneration: old.observedGeneration } : {}),
      },
      nowTimestamp(this.env),
    );
    const res = yield* this.update(pdb, { ...old, disruptionsAllowed: 0, conditions });
    return res ? statusError(res, objectKey(pdb)) : undefined;
  }

  /** The status update (`UpdateStatus` with the cached resourceVersion). */
  private *update(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus): Sync<Status | undefined> {
    const obj: PodDisruptionBudget = { ...deepCopy(pdb), status };
    const res: ApiResult = yield* call({ type: 'ApiUpdate', resource: 'poddisruptionbudgets', namespace: pdb.metadata.namespace, name: pdb.metadata.name ?? '', subresource: 'status', object: obj });
    const { namespace = '', name = '' } = pdb.metadata;
    this.env.trace('controller.disruption.update', `${namespace}/${name} allowed=${status.disruptionsAllowed} healthy=${status.currentHealthy}/${status.desiredHealthy} expected=${status.expectedPods}: ${res.code}`, {
      namespace,
      pdb: name,
      disruptionsAllowed: status.disruptionsAllowed,
      currentHealthy: status.currentHealthy,
      desiredHealthy: status.desiredHealthy,
      expectedPods: status.expectedPods,
      code: res.code,
    });
    return res.code < 300 ? undefined : (res.body as Status);
  }
}
