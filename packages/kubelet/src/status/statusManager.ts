/**
 * The status manager: `pkg/kubelet/status/status_manager.go` (v1.23.13 read; spec §10). A
 * versioned cache of the statuses the kubelet computed; one serial loop (the Go goroutine)
 * syncs them to the apiserver — from the 1000-deep channel at once, and every 10 s in a batch
 * that also reconciles and retries — with GET, a strategic-merge PATCH of `pods/status` only
 * when something changed (`PatchPodStatus` skips unchanged statuses), and, once `canBeDeleted`
 * holds, the final DELETE with gracePeriodSeconds 0 and a UID precondition.
 */
import type { ApiResult, Pod, PodCondition, PodStatus, Status } from '@podsim/api';
import type { ApiClient } from '../apiClient.js';
import type { KubeletEnv } from '../env.js';
import { deepEqual, objectsEqualExcept } from '@podsim/api';

export interface VersionedPodStatus {
  readonly status: PodStatus;
  readonly version: number;
  readonly podName: string;
  readonly podNamespace: string;
}

/** What the status manager asks the rest of the kubelet. */
export interface StatusManagerDeps {
  readonly env: KubeletEnv;
  readonly client: ApiClient;
  /** `podManager.GetPodByUID`. */
  getPodByUID(uid: string): Pod | undefined;
  /** `podDeletionSafety.PodResourcesAreReclaimed(pod, status)`. */
  podResourcesAreReclaimed(pod: Pod, status: PodStatus): boolean;
  /** The batch `syncPeriod` (10 s), µs. */
  readonly syncPeriodUs: number;
  /** Test-only planted bug: the final DELETE without its UID precondition. */
  readonly skipUidPrecondition?: boolean;
  /**
   * The caller tells {@link StatusManager.podUpdated} of every change of `getPodByUID(uid)`;
   * then the 10 s batch looks first at the pods something happened to (see syncBatch).
   */
  readonly notifiesPodUpdates?: boolean;
}

/** PodStatus lists with `patchStrategy:"merge"` and their patchMergeKey (k8s.io/api core/v1 types.go). */
const STATUS_MERGE_KEYS: Readonly<Record<string, string>> = { conditions: 'type', podIPs: 'ip' };
const KUBELET_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady']);
const CHANNEL_CAPACITY = 1000;

/** `kubetypes.PodConditionByKubelet`. */
export function podConditionByKubelet(t: string): boolean {
  return KUBELET_CONDITIONS.has(t);
}

/** `mergePodStatus`: keep the non-kubelet conditions of the API status, take the kubelet's own. */
export function mergePodStatus(oldStatus: PodStatus, newStatus: PodStatus): PodStatus {
  const conditions: PodCondition[] = [];
  for (const c of oldStatus.conditions ?? []) if (!podConditionByKubelet(c.type)) conditions.push(c);
  for (const c of newStatus.conditions ?? []) if (podConditionByKubelet(c.type)) conditions.push(c);
  return { ...newStatus, conditions };
}

/** `isPodStatusByKubeletEqual`. */
export function isPodStatusByKubeletEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  if (!kubeletConditionsEqual(oldStatus, status)) return false;
  // deepEqual({ ...oldStatus, conditions: status.conditions }, status), without the copy (it ran
  // on every status update of every pod).
  return objectsEqualExcept(oldStatus as Record<string, unknown>, status as Record<string, unknown>, 'conditions');
}

/** The condition half of `isPodStatusByKubeletEqual`: each kubelet condition of `status` has its status, message and reason in `oldStatus`. */
function kubeletConditionsEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  const conds = status.conditions;
  if (conds === undefined) return true;
  const olds = oldStatus.conditions;
  for (let i = 0; i < conds.length; i++) {
    const c = conds[i];
    if (!podConditionByKubelet(c.type)) continue;
    const oc = olds === undefined ? undefined : findCondition(olds, c.type);
    if (!oc || oc.status !== c.status || oc.message !== c.message || oc.reason !== c.reason) return false;
  }
  return true;
}

/** The first condition of `type` (`conditions.find`, without a closure per call). */
function findCondition(conditions: readonly PodCondition[], type: string): PodCondition | undefined {
  for (let i = 0; i < conditions.length; i++) if (conditions[i].type === type) return conditions[i];
  return undefined;
}

/**
 * `isPodStatusByKubeletEqual(oldStatus, next)` for the status `updateStatusInternal` would build
 * from `status` (its conditions with transition times, `startTime` set to `startTime`), without
 * building it: the transition times are not compared, so only `startTime` differs from `status`.
 * Exported for its test.
 */
export function unchangedByKubelet(oldStatus: PodStatus, status: PodStatus, startTime: string): boolean {
  if (!kubeletConditionsEqual(oldStatus, status)) return false;
  if (oldStatus.startTime !== startTime) return false;
  return objectsEqualExcept(oldStatus as Record<string, unknown>, status as Record<string, unknown>, 'conditions', 'startTime');
}

/**
 * The strategic-merge patch from `oldStatus` to `newStatus` (what `PatchPodStatus` sends, like
 * `strategicpatch.CreateTwoWayMergePatch`): changed top-level fields; for the lists PodStatus
 * declares with a patchMergeKey (conditions by type, podIPs by ip) the changed items with explicit
 * nulls for fields they lost, `$patch: delete` for removed items and `$setElementOrder/<list>`;
 * other lists (containerStatuses has no merge key) are replaced whole.
 * `undefined` when nothing changed (`unchanged`: no request is made).
 */
export function preparePatchForPodStatus(uid: string, oldStatus: PodStatus, newStatus: PodStatus): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  const o = oldStatus as Record<string, unknown>;
  const n = newStatus as Record<string, unknown>;
  const keys = new Set([...Object.keys(o), ...Object.keys(n)]);
  for (const k of keys) {
    if (deepEqual(o[k], n[k])) continue;
    if (n[k] === undefined) patch[k] = null;
    else if (Array.isArray(n[k]) && Array.isArray(o[k]) && STATUS_MERGE_KEYS[k] !== undefined) {
      const key = STATUS_MERGE_KEYS[k];
      const oldItems = o[k] as Record<string, unknown>[];
      const newItems = n[k] as Record<string, unknown>[];
      const items: unknown[] = [];
      for (const it of newItems) {
        const prev = oldItems.find((x) => x[key] === it[key]);
        if (!deepEqual(prev, it)) items.push(withNulls(prev, it));
      }
      for (const old of oldItems) if (!newItems.some((x) => x[key] === old[key])) items.push({ [key]: old[key], $patch: 'delete' });
      patch[`$setElementOrder/${k}`] = newItems.map((it) => ({ [key]: it[key] }));
      if (items.length > 0) patch[k] = items;
    } else if (Array.isArray(n[k])) patch[k] = n[k];
    else patch[k] = withNulls(o[k], n[k]);
  }
  if (Object.keys(patch).length === 0) return undefined;
  return { metadata: { uid }, status: patch };
}

/** `next` with explicit nulls for map keys `prev` had and `next` lacks (recursively). */
function withNulls(prev: unknown, next: unknown): unknown {
  if (prev === null || next === null || typeof prev !== 'object' || typeof next !== 'object' || Array.isArray(prev) || Array.isArray(next)) return next;
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(n)) if (n[k] !== undefined) out[k] = withNulls(p[k], n[k]);
  for (const k of Object.keys(p)) if (p[k] !== undefined && n[k] === undefined) out[k] = null;
  return out;
}

interface SyncRequest {
  readonly uid: string;
  readonly status: VersionedPodStatus;
}

export class StatusManager {
  readonly podStatuses = new Map<string, VersionedPodStatus>();
  readonly apiStatusVersions = new Map<string, number>();
  private readonly channel: SyncRequest[] = [];
  /**
   * `needsReconcile`'s last answer per pod version, with the cached status it was for (weak: a
   * pod version the kubelet no longer holds is not kept for it).
   */
  private readonly reconciled = new WeakMap<Pod, { status: PodStatus; needed: boolean }>();
  /**
   * With `notifiesPodUpdates`: the UIDs whose batch answer (needsUpdate or needsReconcile) may
   * have changed since the last batch — a new cached status or API version, another pod object
   * — and those the last batch found needing a sync or whose pod has a deletionTimestamp (its
   * `canBeDeleted` reads the rest of the kubelet). Any other pod needs nothing.
   */
  private readonly batchSuspects = new Set<string>();
  /** UIDs whose API version may have lost its cached status (syncBatch's first loop looks at those). */
  private readonly staleVersionSuspects = new Set<string>();
  /** UIDs that entered {@link podStatuses} since the last {@link removeOrphanedStatuses} with `removed`. */
  private readonly unchecked = new Set<string>();
  private busy = false;
  private tickPending = false;
  private started = false;
  /** Number of API calls made (GET, PATCH, DELETE), for tests and metrics. */
  calls = 0;

  constructor(private readonly deps: StatusManagerDeps) {}

  /** `Start`: the sync loop (channel + 10 s ticker). */
  start(): void {
    if (this.started) return;
    this.started = true;
    const tick = () => {
      this.tickPending = true;
      this.pump();
      this.deps.env.setTimer(this.deps.syncPeriodUs, tick);
    };
    this.deps.env.setTimer(this.deps.syncPeriodUs, tick);
  }

  /** The pod manager's pod of `uid` changed (added, updated or removed); see `notifiesPodUpdates`. */
  podUpdated(uid: string): void {
    this.batchSuspects.add(uid);
  }

  /** `GetPodStatus`: the cached status. */
  getPodStatus(uid: string): PodStatus | undefined {
    return this.podStatuses.get(uid)?.status;
  }

  /** `SetPodStatus`: forced when the pod has a deletionTimestamp. */
  setPodStatus(pod: Pod, status: PodStatus): void {
    this.updateStatusInternal(pod, status, pod.metadata.deletionTimestamp !== undefined);
  }

  /** `SetContainerReadiness`. */
  setContainerReadiness(pod: Pod, containerId: string, ready: boolean): void {
    const cached = this.podStatuses.get(pod.metadata.uid!);
    if (!cached) return;
    const cid = `containerd://${containerId}`;
    const cs = cached.status.containerStatuses ?? [];
    const i = cs.findIndex((c) => c.containerID === cid);
    if (i < 0 || cs[i].ready === ready) return;
    const containerStatuses = cs.map((c, j) => (j === i ? { ...c, ready } : c));
    const unready = pod.spec.containers.filter((c) => !containerStatuses.find((s) => s.name === c.name)?.ready).map((c) => c.name);
    const cr: PodCondition =
      unready.length === 0 ? { type: 'ContainersReady', status: 'True' } : { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]` };
    const rd: PodCondition = cr.status === 'True' ? { type: 'Ready', status: 'True' } : { ...cr, type: 'Ready' };
    const conditions = (cached.status.conditions ?? []).map((c) => (c.type === 'ContainersReady' ? cr : c.type === 'Ready' ? rd : c));
    this.updateStatusInternal(pod, { ...cached.status, containerStatuses, conditions }, false);
  }

  /**
   * `SetContainerStartup(podUID, containerID, started)`: sets `started` of that container in the
   * cached status (conditions untouched) and queues an update; no-op if unchanged or unknown.
   */
  setContainerStartup(pod: Pod, containerId: string, started: boolean): void {
    const cached = this.podStatuses.get(pod.metadata.uid!);
    if (!cached) return;
    const cid = `containerd://${containerId}`;
    const cs = cached.status.containerStatuses ?? [];
    const i = cs.findIndex((c) => c.containerID === cid);
    if (i < 0 || cs[i].started === started) return;
    const containerStatuses = cs.map((c, j) => (j === i ? { ...c, started } : c));
    this.updateStatusInternal(pod, { ...cached.status, containerStatuses }, false);
  }

  /**
   * `TerminatePod`: every container not terminated becomes terminated 137
   * `ContainerStatusUnknown`; then a forced update.
   */
  terminatePod(pod: Pod): void {
    const cached = this.podStatuses.get(pod.metadata.uid!)?.status ?? pod.status ?? {};
    const fix = (list: PodStatus['containerStatuses']) =>
      list?.map((c) =>
        c.state.terminated
          ? c
          : { ...c, state: { terminated: { reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated', exitCode: 137 } } },
      );
    this.updateStatusInternal(pod, { ...cached, containerStatuses: fix(cached.containerStatuses), initContainerStatuses: fix(cached.initContainerStatuses) }, true);
  }

  /**
   * `RemoveOrphanedStatuses`: forget statuses of pods the kubelet no longer knows. With
   * `removed` (every UID that left `known` since the previous call with it), only those and the
   * statuses that entered since are looked at: any other status was known then and still is.
   * The same statuses go; the order of the removals is not observable.
   */
  removeOrphanedStatuses(known: { has(uid: string): boolean }, removed?: Iterable<string>): void {
    const forget = (uid: string) => {
      if (known.has(uid)) return;
      this.podStatuses.delete(uid);
      this.apiStatusVersions.delete(uid);
    };
    if (removed === undefined) {
      for (const uid of this.podStatuses.keys()) forget(uid);
      return;
    }
    for (const uid of removed) if (this.podStatuses.has(uid)) forget(uid);
    for (const uid of this.unchecked) if (this.podStatuses.has(uid)) forget(uid);
    this.unchecked.clear();
  }

  private deletePodStatus(uid: string): void {
    this.podStatuses.delete(uid);
    this.staleVersionSuspects.add(uid);
  }

  private setApiStatusVersion(uid: string, version: number): void {
    this.apiStatusVersions.set(uid, version);
    this.batchSuspects.add(uid);
    if (!this.podStatuses.has(uid)) this.staleVersionSuspects.add(uid);
  }

  private deleteApiStatusVersion(uid: string): void {
    this.apiStatusVersions.delete(uid);
    this.batchSuspects.add(uid);
  }

  /** `updateStatusInternal`. Returns true if a new version was queued. */
  private updateStatusInternal(pod: Pod, status: PodStatus, forceUpdate: boolean): boolean {
    const uid = pod.metadata.uid!;
    const cached = this.podStatuses.get(uid);
    const oldStatus = cached?.status ?? pod.status ?? {};
    if (!checkContainerStateTransition(oldStatus, status, pod.spec.restartPolicy ?? 'Always')) return false;
    const env = this.deps.env;
    // "Ignoring same status for pod": decided before the new status is built (most updates of a
    // running pod change nothing); the formatted now is only needed when a time is missing.
    const startTime = oldStatus.startTime || status.startTime || env.clock.format(env.now());
    if (cached && !forceUpdate && unchangedByKubelet(cached.status, status, startTime)) return false;
    let now: string | undefined;
    let conditions: PodCondition[] | undefined;
    if (status.conditions !== undefined) {
      conditions = new Array<PodCondition>(status.conditions.length);
      const olds = oldStatus.conditions;
      for (let i = 0; i < status.conditions.length; i++) {
        const c = status.conditions[i];
        if (!podConditionByKubelet(c.type)) {
          conditions[i] = c;
          continue;
        }
        const oc = olds === undefined ? undefined : findCondition(olds, c.type);
        const lastTransitionTime = oc && oc.status === c.status && oc.lastTransitionTime ? oc.lastTransitionTime : (now ??= env.clock.format(env.now()));
        conditions[i] = { ...c, lastTransitionTime };
      }
    }
    // { ...status, conditions, startTime } in the same key order (an assignment keeps an existing
    // key's place), without spreading a conditional literal, which builds a new shape per call.
    const next: PodStatus = { ...status };
    if (conditions !== undefined) next.conditions = conditions;
    next.startTime = startTime;
    const v: VersionedPodStatus = { status: next, version: (cached?.version ?? 0) + 1, podName: pod.metadata.name!, podNamespace: pod.metadata.namespace ?? 'default' };
    this.podStatuses.set(uid, v);
    this.batchSuspects.add(uid);
    if (cached === undefined) this.unchecked.add(uid);
    if (this.channel.length >= CHANNEL_CAPACITY) return false; // the 10 s batch will catch it
    this.channel.push({ uid, status: v });
    this.pump();
    return true;
  }

  /**
   * The select loop: when idle, take the ticker if it fired (Go picks at random among ready
   * cases; a seeded coin here), else the next channel entry.
   */
  private pump(): void {
    if (this.busy) return;
    const fromChannel = this.channel.length > 0;
    if (this.tickPending && (!fromChannel || this.deps.env.stream('status-select').float() < 0.5)) {
      this.tickPending = false;
      this.channel.length = 0; // the batch handles them
      this.busy = true;
      this.syncBatch(() => {
        this.busy = false;
        this.pump();
      });
      return;
    }
    const req = this.channel.shift();
    if (!req) return;
    this.busy = true;
    this.syncPod(req.uid, req.status, () => {
      this.busy = false;
      this.pump();
    });
  }

  /** `needsUpdate`. */
  private needsUpdate(uid: string, status: VersionedPodStatus): boolean {
    const latest = this.apiStatusVersions.get(uid);
    if (latest === undefined || latest < status.version) return true;
    const pod = this.deps.getPodByUID(uid);
    if (!pod) return false;
    return this.canBeDeleted(pod, status.status);
  }

  /**
   * `needsReconcile`: the pod manager's (API) status differs from the cache. Pod versions and
   * cached statuses are immutable, so the answer for the same pair is remembered: the 10 s batch
   * asks it of every pod, and a running pod's pair seldom changes between batches.
   */
  private needsReconcile(uid: string, status: PodStatus): boolean {
    const pod = this.deps.getPodByUID(uid);
    if (!pod) return false;
    const memo = this.reconciled.get(pod);
    if (memo !== undefined && memo.status === status) return memo.needed;
    const needed = !isPodStatusByKubeletEqual(pod.status ?? {}, status);
    if (memo !== undefined) {
      memo.status = status;
      memo.needed = needed;
    } else this.reconciled.set(pod, { status, needed });
    return needed;
  }

  /** `canBeDeleted`: dts set, not a mirror pod, resources reclaimed. */
  canBeDeleted(pod: Pod, status: PodStatus): boolean {
    if (pod.metadata.deletionTimestamp === undefined) return false;
    if (pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return false;
    return this.deps.podResourcesAreReclaimed(pod, status);
  }

  /**
   * `syncBatch`. With `notifiesPodUpdates`, the suspects are looked at first: a pod that is not
   * one has the cached status, API version and pod object it had when the last batch found that
   * it needed nothing, and no deletionTimestamp, so it needs nothing again. When no suspect needs
   * a sync the batch syncs nothing (the full pass would find the same); otherwise the full pass
   * runs as before, so the pods are synced in the same order.
   */
  private syncBatch(done: () => void): void {
    const tracked = this.deps.notifiesPodUpdates === true;
    if (!tracked) {
      // Deleting the entry being visited is allowed during a Map iteration (no copy of the keys).
      for (const uid of this.apiStatusVersions.keys()) if (!this.podStatuses.has(uid)) this.apiStatusVersions.delete(uid);
    } else {
      // An API version without a cached status: its status was deleted, or it was set after.
      for (const uid of this.staleVersionSuspects) if (!this.podStatuses.has(uid)) this.apiStatusVersions.delete(uid);
      this.staleVersionSuspects.clear();
      let any = false;
      for (const uid of this.batchSuspects) {
        const status = this.podStatuses.get(uid);
        const needed = status !== undefined && (this.needsUpdate(uid, status) || this.needsReconcile(uid, status.status));
        if (needed) any = true;
        else if (status === undefined || this.deps.getPodByUID(uid)?.metadata.deletionTimestamp === undefined) this.batchSuspects.delete(uid);
      }
      if (!any) return done();
    }
    const updated: SyncRequest[] = [];
    for (const [uid, status] of this.podStatuses) {
      if (this.needsUpdate(uid, status)) updated.push({ uid, status });
      else if (this.needsReconcile(uid, status.status)) {
        this.deleteApiStatusVersion(uid);
        updated.push({ uid, status });
      }
    }
    const next = (i: number) => {
      if (i >= updated.length) return done();
      this.syncPod(updated[i].uid, updated[i].status, () => next(i + 1));
    };
    next(0);
  }

  private call(req: Parameters<ApiClient['request']>[0], cb: (res: ApiResult) => void): void {
    this.calls++;
    this.deps.client.request(req, cb);
  }

  /** `syncPod(uid, status)`: GET, PATCH if changed, DELETE when it can be deleted. */
  private syncPod(uid: string, status: VersionedPodStatus, done: () => void): void {
    if (!this.needsUpdate(uid, status)) return done();
    const env = this.deps.env;
    this.call({ type: 'ApiGet', resource: 'pods', namespace: status.podNamespace, name: status.podName }, (res) => {
      if (res.code === 404) return done(); // "Pod does not exist on the server"
      if (res.code !== 200) return done();
      const pod = res.body as Pod;
      if (pod.metadata.uid !== uid) {
        // "Pod was deleted and then recreated, skipping status update"
        this.deletePodStatus(uid);
        return done();
      }
      const merged = mergePodStatus(pod.status ?? {}, status.status);
      const patch = preparePatchForPodStatus(uid, pod.status ?? {}, merged);
      const afterPatch = (latest: Pod) => {
        this.setApiStatusVersion(uid, status.version);
        if (!this.canBeDeleted(latest, status.status)) return done();
        const ns = latest.metadata.namespace ?? 'default';
        const name = latest.metadata.name!;
        const options = this.deps.skipUidPrecondition ? { gracePeriodSeconds: 0 } : { gracePeriodSeconds: 0, preconditions: { uid } };
        this.call({ type: 'ApiDelete', resource: 'pods', namespace: ns, name, options }, (d) => {
          if (env.tracing('kubelet.finalDelete')) env.trace('kubelet.finalDelete', `DELETE ${ns}/${name} grace=0 → ${d.code}`, { podUid: uid, pod: `${ns}/${name}`, namespace: ns, code: d.code });
          if (d.code === 200 || d.code === 202) this.deletePodStatus(uid);
          done();
        });
      };
      if (patch === undefined) return afterPatch(pod);
      this.call({ type: 'ApiPatch', resource: 'pods', namespace: pod.metadata.namespace, name: pod.metadata.name!, subresource: 'status', patchType: 'strategic', patch }, (p) => {
        if (p.code !== 200) {
          if ((p.body as Status).kind === 'Status') env.count('kubelet.statusPatchFailed');
          return done();
        }
        afterPatch(p.body as Pod);
      });
    });
  }
}

/** `checkContainerStateTransition`: a terminated container may not come back unless the policy restarts. */
export function checkContainerStateTransition(oldStatus: PodStatus, newStatus: PodStatus, restartPolicy: string): boolean {
  if (restartPolicy === 'Always') return true;
  for (const old of oldStatus.containerStatuses ?? []) {
    if (!old.state.terminated) continue;
    if (restartPolicy === 'OnFailure' && old.state.terminated.exitCode !== 0) continue;
    const n = newStatus.containerStatuses?.find((c) => c.name === old.name);
    if (n && !n.state.terminated) return false;
  }
  return true;
}
