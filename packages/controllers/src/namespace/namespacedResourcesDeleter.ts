/**
 * The namespace deleter: kubernetes v1.22 `pkg/controller/namespace/deletion/
 * namespaced_resources_deleter.go` (`Delete`, `deleteAllContent`,
 * `deleteAllContentForGroupVersionResource`, `estimateGracefulTermination[ForPods]`,
 * `finalizeNamespace`, `retryOnConflictError`) and `status_condition_utils.go` (the five
 * Namespace* conditions). Everything is a live API call, as upstream (GET the namespace, LIST and
 * DELETE per resource). podsim serves no `deletecollection`, so — as upstream when discovery
 * lacks the verb — every resource goes through `deleteEachItem` (LIST, then one DELETE with
 * propagationPolicy Background per item). Simplification: resources are visited in discovery
 * order (core events, pods; apps deployments, replicasets), not Go's random map order.
 */
import type { ApiRequest, ApiResult, KubeList, KubeObject, Namespace, NamespaceCondition, Pod, ResourceName } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';
import { call, isConflict, isNotFound, isOk, objectOf, statusOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import { nowTimestamp, parseTimestamp } from '../env.js';
import type { RequeueAfter } from '../workqueue.js';

/** `v1.FinalizerKubernetes`, the token this controller removes (`--finalizer-token` of kcm). */
export const FINALIZER_KUBERNETES = 'kubernetes';
/** `finalizerEstimateSeconds`: assumed wait for items that only wait on finalizers. */
export const FINALIZER_ESTIMATE_SECONDS = 15;

/** A namespaced resource podsim serves that supports delete (`ServerPreferredNamespacedResources`). */
export interface DeletableResource {
  readonly group: string;
  readonly version: string;
  readonly resource: ResourceName;
}

/** The namespaced, deletable resources podsim serves, in discovery order. */
export const NAMESPACED_RESOURCES: readonly DeletableResource[] = [
  { group: '', version: 'v1', resource: 'events' },
  { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
  { group: '', version: 'v1', resource: 'pods' },
  { group: 'apps', version: 'v1', resource: 'controllerrevisions' },
  { group: 'apps', version: 'v1', resource: 'daemonsets' },
  { group: 'apps', version: 'v1', resource: 'deployments' },
  { group: 'apps', version: 'v1', resource: 'replicasets' },
  { group: 'apps', version: 'v1', resource: 'statefulsets' },
  { group: 'batch', version: 'v1', resource: 'jobs' },
  { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' },
];

/** Go's `%v` of a `schema.GroupVersionResource`. */
function gvrString(r: DeletableResource): string {
  return `{${r.group} ${r.version} ${r.resource}}`;
}

/** `ResourcesRemainingError`: content remains, estimated to be gone in `estimate` seconds. */
export interface ResourcesRemaining {
  readonly kind: 'ResourcesRemaining';
  readonly estimate: number;
}

/** What {@link NamespacedResourcesDeleter.delete} returns: done, an error (rate-limited retry), or content remaining. */
export type DeleteResult = undefined | SyncError | ResourcesRemaining;

/** `gvrDeletionMetadata`. */
interface GvrDeletionMetadata {
  /** Seconds to wait; 0 means no estimate was made, not that everything is gone. */
  readonly finalizerEstimateSeconds: number;
  readonly numRemaining: number;
  readonly finalizersToNumRemaining?: ReadonlyMap<string, number>;
}

const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;
const OK_MESSAGES: Record<(typeof CONDITION_TYPES)[number], string> = {
  NamespaceDeletionDiscoveryFailure: 'All resources successfully discovered',
  NamespaceDeletionGroupVersionParsingFailure: 'All legacy kube types successfully parsed',
  NamespaceDeletionContentFailure: 'All content successfully deleted, may be waiting on finalization',
  NamespaceContentRemaining: 'All content successfully removed',
  NamespaceFinalizersRemaining: 'All content successfully removed',
};
const OK_REASONS: Record<(typeof CONDITION_TYPES)[number], string> = {
  NamespaceDeletionDiscoveryFailure: 'ResourcesDiscovered',
  NamespaceDeletionGroupVersionParsingFailure: 'ParsedGroupVersions',
  NamespaceDeletionContentFailure: 'ContentDeleted',
  NamespaceContentRemaining: 'ContentRemoved',
  NamespaceFinalizersRemaining: 'ContentRemoved',
};

/** At most this many conflict retries per update (upstream loops until success or another error). */
const MAX_CONFLICT_RETRIES = 10;

export class NamespacedResourcesDeleter {
  constructor(
    private readonly env: ControllerEnv,
    /** The finalizer token removed from spec.finalizers once the namespace is empty. */
    private readonly finalizerToken: string = FINALIZER_KUBERNETES,
    private readonly resources: readonly DeletableResource[] = NAMESPACED_RESOURCES,
  ) {}

  /**
   * `Delete(nsName)`: nothing if the namespace is gone or not deleting; else makes sure its phase
   * is Terminating, deletes all content and, once none remains, finalizes it. Returns
   * {@link ResourcesRemaining} while content remains (the caller requeues after estimate/2 + 1 s).
   */
  *delete(nsName: string): Sync<DeleteResult> {
    // Multiple controllers may edit a namespace during termination: first get the latest state
    // of the namespace before proceeding; if the namespace was deleted already, don't do anything.
    const got = yield* call({ type: 'ApiGet', resource: 'namespaces', name: nsName });
    if (isNotFound(got)) return undefined;
    if (!isOk(got)) return syncErrorOf(got, `get namespace ${nsName}`);
    let namespace = objectOf<Namespace>(got);
    if (!namespace.metadata.deletionTimestamp) return undefined;

    // ensure that the status is up to date on the namespace; NotFound means it is truly gone
    const st = yield* this.retryOnConflictError(namespace, (ns) => this.updateNamespaceStatusFunc(ns));
    if ('code' in st && isNotFound(st)) return undefined;
    if (!('metadata' in st)) return syncErrorOf(st, `update status of namespace ${nsName}`);
    namespace = st;
    // the latest view of the namespace asserts that namespace is no longer deleting..
    if (!namespace.metadata.deletionTimestamp) return undefined;
    // return if it is already finalized.
    if ((namespace.spec?.finalizers ?? []).length === 0) return undefined;

    // there may still be content for us to remove
    const { estimate, errors } = yield* this.deleteAllContent(namespace);
    if (errors.length > 0) {
      return { reason: 'NamespaceDeletionFailed', message: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
    }
    if (estimate > 0) return { kind: 'ResourcesRemaining', estimate };

    // we have removed content, so mark it finalized by us
    const fin = yield* this.retryOnConflictError(namespace, (ns) => this.finalizeNamespace(ns));
    this.env.trace('controller.namespace.finalize', `${nsName} finalized: ${'code' in fin ? fin.code : 200}`, { namespace: nsName, code: 'code' in fin ? fin.code : 200 });
    // NotFound: another controller sharing the token finished the delete.
    if ('code' in fin && !isNotFound(fin)) return syncErrorOf(fin, `finalize namespace ${nsName}`);
    return undefined;
  }

  /**
   * `retryOnConflictError`: runs `fn`, and on 409 Conflict GETs the latest namespace and runs it
   * again (an error if the UID changed). Returns the namespace, or the failed result.
   */
  private *retryOnConflictError(namespace: Namespace, fn: (ns: Namespace) => Sync<Namespace | ApiResult>): Sync<Namespace | ApiResult> {
    let latest = namespace;
    for (let attempt = 0; ; attempt++) {
      const res = yield* fn(latest);
      if (!('code' in res) || !isConflict(res) || attempt >= MAX_CONFLICT_RETRIES) return res;
      const got = yield* call({ type: 'ApiGet', resource: 'namespaces', name: latest.metadata.name ?? '' });
      if (!isOk(got)) return got;
      const next = objectOf<Namespace>(got);
      if (next.metadata.uid !== latest.metadata.uid) {
        return { type: 'ApiResult', code: 500, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 500, message: 'namespace uid has changed across retries' } };
      }
      latest = next;
    }
  }

  /** `updateNamespaceStatusFunc`: PUT status with phase Terminating unless it already is. */
  private *updateNamespaceStatusFunc(ns: Namespace): Sync<Namespace | ApiResult> {
    if (!ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') return ns;
    const res = yield* call({ type: 'ApiUpdate', resource: 'namespaces', name: ns.metadata.name ?? '', subresource: 'status', object: { ...ns, status: { ...ns.status, phase: 'Terminating' } } as Namespace });
    return isOk(res) ? objectOf<Namespace>(res) : res;
  }

  /** `finalizeNamespace`: PUT finalize with spec.finalizers minus the token (a sorted set). */
  private *finalizeNamespace(ns: Namespace): Sync<Namespace | ApiResult> {
    const finalizers = [...new Set((ns.spec?.finalizers ?? []).filter((f) => f !== this.finalizerToken))].sort();
    const res = yield* call({ type: 'ApiUpdate', resource: 'namespaces', name: ns.metadata.name ?? '', subresource: 'finalize', object: { ...ns, spec: { ...ns.spec, finalizers } } as Namespace });
    return isOk(res) ? objectOf<Namespace>(res) : res;
  }

  /**
   * `deleteAllContent`: every resource's content deleted (errors collected, the rest still
   * visited), the largest estimate, and the namespace conditions updated when they changed.
   */
  private *deleteAllContent(ns: Namespace): Sync<{ estimate: number; errors: string[] }> {
    const namespace = ns.metadata.name ?? '';
    const deletedAt = parseTimestamp(this.env, ns.metadata.deletionTimestamp) ?? this.env.now;
    const errors: string[] = [];
    let estimate = 0;
    const gvrToNumRemaining = new Map<DeletableResource, number>();
    const finalizersToNumRemaining = new Map<string, number>();
    for (const gvr of this.resources) {
      const [meta, err] = yield* this.deleteAllContentForGroupVersionResource(gvr, namespace, deletedAt);
      if (err !== undefined) errors.push(err);
      if (meta.finalizerEstimateSeconds > estimate) estimate = meta.finalizerEstimateSeconds;
      if (meta.numRemaining > 0) {
        gvrToNumRemaining.set(gvr, meta.numRemaining);
        for (const [f, n] of meta.finalizersToNumRemaining ?? []) if (n > 0) finalizersToNumRemaining.set(f, (finalizersToNumRemaining.get(f) ?? 0) + n);
      }
    }
    // we always want to update the conditions because if we have set a condition to "it
    // worked" after it was previously "it didn't work", we need to reflect that information.
    const conditions = this.newConditions(gvrToNumRemaining, finalizersToNumRemaining, errors);
    const updated = this.updateConditions(ns.status?.conditions ?? [], conditions);
    if (updated) {
      // An error here is only logged upstream (HandleError); the next sync tries again.
      yield* call({ type: 'ApiUpdate', resource: 'namespaces', name: namespace, subresource: 'status', object: { ...ns, status: { ...ns.status, conditions: updated } } as Namespace });
    }
    return { estimate, errors };
  }

  /**
   * `deleteAllContentForGroupVersionResource`: estimate, delete each item, list again. Items
   * left with no estimate and no finalizer are an error ("unexpected items still remain").
   */
  private *deleteAllContentForGroupVersionResource(gvr: DeletableResource, namespace: string, deletedAt: number): Sync<[GvrDeletionMetadata, string | undefined]> {
    // estimate how long it will take for the resource to be deleted (needed for objects that support graceful delete)
    const est = yield* this.estimateGracefulTermination(gvr, namespace, deletedAt);
    if (typeof est === 'string') return [{ finalizerEstimateSeconds: 0, numRemaining: 0 }, est];
    const estimate = est;
    // delete collection is not supported (podsim serves no deletecollection): list and delete each item
    const eachErr = yield* this.deleteEachItem(gvr, namespace);
    if (eachErr !== undefined) return [{ finalizerEstimateSeconds: estimate, numRemaining: 0 }, eachErr];
    // verify there are no more remaining items
    const list = yield* call({ type: 'ApiList', resource: gvr.resource, namespace });
    if (!isOk(list)) return [{ finalizerEstimateSeconds: estimate, numRemaining: 0 }, statusOf(list).message ?? `HTTP ${list.code}`];
    const items = (list.body as KubeList).items;
    if (items.length === 0) return [{ finalizerEstimateSeconds: 0, numRemaining: 0 }, undefined];
    // use the list to find the finalizers
    const finalizersToNumRemaining = new Map<string, number>();
    for (const item of items) for (const f of item.metadata.finalizers ?? []) finalizersToNumRemaining.set(f, (finalizersToNumRemaining.get(f) ?? 0) + 1);
    if (estimate !== 0) return [{ finalizerEstimateSeconds: estimate, numRemaining: items.length, finalizersToNumRemaining }, undefined];
    // if any item has a finalizer, we treat that as a normal condition, and use a default estimation to allow for GC to complete.
    if (finalizersToNumRemaining.size > 0) {
      return [{ finalizerEstimateSeconds: FINALIZER_ESTIMATE_SECONDS, numRemaining: items.length, finalizersToNumRemaining }, undefined];
    }
    // nothing reported a finalizer, so something was unexpected as it should have been deleted.
    return [{ finalizerEstimateSeconds: estimate, numRemaining: items.length }, `unexpected items still remain in namespace: ${namespace} for gvr: ${gvrString(gvr)}`];
  }

  /**
   * `estimateGracefulTermination`: for pods the largest `terminationGracePeriodSeconds` of the
   * non-terminal pods (a live LIST), 0 for other resources; 0 as well once that long has passed
   * since the namespace's deletionTimestamp. Seconds, or an error message.
   */
  private *estimateGracefulTermination(gvr: DeletableResource, namespace: string, deletedAt: number): Sync<number | string> {
    let estimate = 0;
    if (gvr.group === '' && gvr.resource === 'pods') {
      const list = yield* call({ type: 'ApiList', resource: 'pods', namespace });
      if (!isOk(list)) return statusOf(list).message ?? `HTTP ${list.code}`;
      for (const pod of (list.body as KubeList<Pod>).items) {
        // filter out terminal pods
        const phase = pod.status?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') continue;
        const grace = pod.spec.terminationGracePeriodSeconds;
        if (grace !== undefined && grace > estimate) estimate = grace;
      }
    }
    // determine if the estimate is greater than the deletion timestamp
    if (this.env.now - deletedAt >= estimate * US_PER_SECOND) estimate = 0;
    return estimate;
  }

  /** `deleteEachItem`: LIST, then DELETE each item (Background); NotFound and MethodNotAllowed are fine. */
  private *deleteEachItem(gvr: DeletableResource, namespace: string): Sync<string | undefined> {
    const list = yield* call({ type: 'ApiList', resource: gvr.resource, namespace });
    if (!isOk(list)) return isNotFound(list) || list.code === 405 ? undefined : (statusOf(list).message ?? `HTTP ${list.code}`);
    for (const item of (list.body as KubeList).items as KubeObject[]) {
      const name = item.metadata.name ?? '';
      const req: ApiRequest = { type: 'ApiDelete', resource: gvr.resource, namespace, name, options: { propagationPolicy: 'Background' } };
      const res = yield* call(req);
      this.env.count('namespace.delete');
      this.env.trace('controller.namespace.delete', `${namespace}/${name} ${gvr.resource}: ${res.code}`, { resource: gvr.resource, namespace, name, uid: item.metadata.uid, code: res.code });
      if (!isOk(res) && !isNotFound(res) && res.code !== 405) return statusOf(res).message ?? `HTTP ${res.code}`;
    }
    return undefined;
  }

  /** The failure conditions of this pass (`ProcessContentTotals`, `makeDeleteContentCondition`). */
  private newConditions(gvrToNumRemaining: ReadonlyMap<DeletableResource, number>, finalizersToNumRemaining: ReadonlyMap<string, number>, errors: readonly string[]): NamespaceCondition[] {
    const now = nowTimestamp(this.env);
    const out: NamespaceCondition[] = [];
    if (gvrToNumRemaining.size > 0) {
      // sort for stable updates
      const remaining = [...gvrToNumRemaining].map(([gvr, n]) => `${gvr.resource}.${gvr.group} has ${n} resource instances`).sort();
      out.push({ type: 'NamespaceContentRemaining', status: 'True', lastTransitionTime: now, reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${remaining.join(', ')}` });
    }
    if (finalizersToNumRemaining.size > 0) {
      const byFinalizer = [...finalizersToNumRemaining].map(([f, n]) => `${f} in ${n} resource instances`).sort();
      out.push({ type: 'NamespaceFinalizersRemaining', status: 'True', lastTransitionTime: now, reason: 'SomeFinalizerRemain', message: `Some finalizers are remaining: ${byFinalizer.join(', ')}` });
    }
    if (errors.length > 0) {
      const msgs = [...errors].sort();
      out.push({ type: 'NamespaceDeletionContentFailure', status: 'True', lastTransitionTime: now, reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${errors.length} remaining: ${msgs.join(', ')}` });
    }
    return out;
  }

  /**
   * `updateConditions`: every condition type set (the "ok" variant when not failing); the
   * new condition list, or undefined when nothing changed. lastTransitionTime moves only when
   * the status flips.
   */
  private updateConditions(old: readonly NamespaceCondition[], fresh: readonly NamespaceCondition[]): NamespaceCondition[] | undefined {
    const now = nowTimestamp(this.env);
    const conditions = old.map((c) => ({ ...c }));
    let changed = false;
    for (const type of CONDITION_TYPES) {
      const next = fresh.find((c) => c.type === type) ?? { type, status: 'False', lastTransitionTime: now, reason: OK_REASONS[type], message: OK_MESSAGES[type] };
      const cur = conditions.find((c) => c.type === type);
      if (!cur) {
        conditions.push(next);
        changed = true;
      } else if (cur.status !== next.status || cur.message !== next.message || cur.reason !== next.reason) {
        if (cur.status !== next.status) cur.lastTransitionTime = now;
        cur.status = next.status;
        cur.reason = next.reason;
        cur.message = next.message;
        changed = true;
      }
    }
    return changed ? conditions : undefined;
  }
}

/** The worker's requeue for a {@link ResourcesRemaining}: `estimate/2 + 1` seconds (integer division). */
export function requeueForRemaining(r: ResourcesRemaining): RequeueAfter {
  return { requeueAfterUs: (Math.floor(r.estimate / 2) + 1) * US_PER_SECOND };
}
