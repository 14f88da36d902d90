/**
 * The garbage collector (`pkg/controller/garbagecollector/{garbagecollector.go,graph_builder.go}`,
 * v1.22; spec §2.8) over pods, ReplicaSets, Deployments, Jobs, DaemonSets, StatefulSets and ControllerRevisions: a uid graph with virtual owners,
 * `attemptToDeleteItem` (background / foreground propagation, live GETs and absentOwnerCache as
 * upstream), `processDeletingDependentsItem` (foregroundDeletion) and the orphan finalizer.
 * Owner kinds podsim does not serve are treated as existing (never collected).
 */
import type { ApiResult, ControllerRevision, DaemonSet, Deployment, Job, KubeObject, Namespace, OwnerReference, Pod, ReplicaSet, ResourceName, StatefulSet } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { all, call, isConflict, isNotFound, isOk, objectOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { Workers } from '../workqueue.js';

/** `--concurrent-gc-syncs` default. */
export const CONCURRENT_GC_SYNCS = 20;
/** `metav1.FinalizerOrphanDependents`. */
export const FINALIZER_ORPHAN = 'orphan';
/** `metav1.FinalizerDeleteDependents`. */
export const FINALIZER_FOREGROUND = 'foregroundDeletion';
/** Upper bound of the absent-owner cache (upstream: an LRU of 500). */
const ABSENT_OWNER_CACHE_SIZE = 500;

const KIND_RESOURCE: Record<string, { resource: ResourceName; namespaced: boolean }> = {
  Pod: { resource: 'pods', namespaced: true },
  ReplicaSet: { resource: 'replicasets', namespaced: true },
  Deployment: { resource: 'deployments', namespaced: true },
  Node: { resource: 'nodes', namespaced: false },
  Namespace: { resource: 'namespaces', namespaced: false },
  Job: { resource: 'jobs', namespaced: true },
  DaemonSet: { resource: 'daemonsets', namespaced: true },
  StatefulSet: { resource: 'statefulsets', namespaced: true },
  ControllerRevision: { resource: 'controllerrevisions', namespaced: true },
};

interface Identity {
  kind: string;
  resource: ResourceName;
  namespaced: boolean;
  namespace: string;
  name: string;
  uid: string;
}

interface GraphNode {
  identity: Identity;
  /** False for a virtual node: referenced as an owner but not (yet) seen by an informer. */
  observed: boolean;
  owners: OwnerReference[];
  beingDeleted: boolean;
  deletingDependents: boolean;
  finalizers: readonly string[];
  dependents: Set<string>;
}

export interface GarbageCollectorOptions {
  readonly workers?: number;
}

export type DeletionPropagation = 'Orphan' | 'Background' | 'Foreground';

export class GarbageCollector {
  private readonly graph = new Map<string, GraphNode>();
  private readonly absentOwnerCache = new Set<string>();
  readonly attemptToDelete: Workers;
  readonly attemptToOrphan: Workers;

  constructor(
    private readonly env: ControllerEnv,
    informers: {
      pods: Informer<Pod>;
      replicasets: Informer<ReplicaSet>;
      deployments: Informer<Deployment>;
      namespaces?: Informer<Namespace>;
      jobs?: Informer<Job>;
      daemonsets?: Informer<DaemonSet>;
      statefulsets?: Informer<StatefulSet>;
      controllerrevisions?: Informer<ControllerRevision>;
    },
    client: ApiClient,
    opts: GarbageCollectorOptions = {},
  ) {
    const workers = opts.workers ?? CONCURRENT_GC_SYNCS;
    this.attemptToDelete = new Workers(env, workers, (uid) => this.attemptToDeleteItem(uid), client.sender);
    this.attemptToOrphan = new Workers(env, workers, (uid) => this.attemptToOrphanItem(uid), client.sender);
    for (const [kind, inf] of [
      ['Pod', informers.pods],
      ['ReplicaSet', informers.replicasets],
      ['Deployment', informers.deployments],
      ['Namespace', informers.namespaces],
      ['Job', informers.jobs],
      ['DaemonSet', informers.daemonsets],
      ['StatefulSet', informers.statefulsets],
      ['ControllerRevision', informers.controllerrevisions],
    ] as const) {
      if (!inf) continue;
      (inf as unknown as Informer<KubeObject>).addEventHandler({
        onAdd: (o) => this.observe(kind, undefined, o),
        onUpdate: (old, o) => this.observe(kind, old, o),
        onDelete: (o) => this.observeDeleted(o.metadata.uid ?? ''),
      });
    }
  }

  /** Number of graph nodes (for tests). */
  get graphSize(): number {
    return this.graph.size;
  }

  // ---- graph builder (processGraphChanges) ------------------------------------------------

  private identityOf(kind: string, o: KubeObject): Identity {
    const kr = KIND_RESOURCE[kind];
    return { kind, resource: kr.resource, namespaced: kr.namespaced, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '', uid: o.metadata.uid ?? '' };
  }

  private observe(kind: string, old: KubeObject | undefined, o: KubeObject): void {
    const uid = o.metadata.uid ?? '';
    if (!uid) return;
    const owners = o.metadata.ownerReferences ?? [];
    let node = this.graph.get(uid);
    const wasDeletingDependents = node?.deletingDependents ?? false;
    let oldOwners: OwnerReference[] = [];
    if (!node) {
      node = {
        identity: this.identityOf(kind, o),
        observed: true,
        owners,
        beingDeleted: false,
        deletingDependents: false,
        finalizers: [],
        dependents: new Set(),
      };
      this.graph.set(uid, node);
    } else {
      oldOwners = node.owners;
      if (!node.observed) {
        node.observed = true;
        node.identity = this.identityOf(kind, o);
      }
      node.owners = owners;
    }
    node.beingDeleted = !!o.metadata.deletionTimestamp;
    node.finalizers = o.metadata.finalizers ?? [];
    // Owner links: add new ones (creating virtual owners to verify), drop removed ones.
    const oldUids = new Set(oldOwners.map((r) => r.uid));
    const newUids = new Set(owners.map((r) => r.uid));
    for (const ref of owners) {
      if (oldUids.has(ref.uid)) continue;
      let owner = this.graph.get(ref.uid);
      if (!owner) {
        const kr = KIND_RESOURCE[ref.kind];
        owner = {
          identity: {
            kind: ref.kind,
            resource: kr?.resource ?? 'pods',
            namespaced: kr?.namespaced ?? true,
            namespace: kr?.namespaced === false ? '' : (o.metadata.namespace ?? ''),
            name: ref.name,
            uid: ref.uid,
          },
          observed: false,
          owners: [],
          beingDeleted: false,
          deletingDependents: false,
          finalizers: [],
          dependents: new Set(),
        };
        this.graph.set(ref.uid, owner);
        if (kr) this.attemptToDelete.queue.add(ref.uid);
      }
      owner.dependents.add(uid);
    }
    for (const ref of oldOwners) {
      if (newUids.has(ref.uid)) continue;
      const owner = this.graph.get(ref.uid);
      if (!owner) continue;
      owner.dependents.delete(uid);
      if (owner.deletingDependents) this.attemptToDelete.queue.add(ref.uid);
    }
    // An owner waiting for dependents also needs a look when a blockOwnerDeletion flag drops.
    for (const ref of owners) {
      const before = oldOwners.find((r) => r.uid === ref.uid);
      if (before?.blockOwnerDeletion && !ref.blockOwnerDeletion && this.graph.get(ref.uid)?.deletingDependents) this.attemptToDelete.queue.add(ref.uid);
    }
    // processTransitions.
    const fins = node.finalizers;
    const oldFins = old?.metadata.finalizers ?? [];
    const oldDeleting = !!old?.metadata.deletionTimestamp;
    if (node.beingDeleted && fins.includes(FINALIZER_ORPHAN) && !(oldDeleting && oldFins.includes(FINALIZER_ORPHAN))) {
      this.attemptToOrphan.queue.add(uid);
    }
    if (node.beingDeleted && fins.includes(FINALIZER_FOREGROUND) && !(oldDeleting && oldFins.includes(FINALIZER_FOREGROUND))) {
      node.deletingDependents = true;
      for (const dep of node.dependents) this.attemptToDelete.queue.add(dep);
      this.attemptToDelete.queue.add(uid);
    } else if (wasDeletingDependents && !fins.includes(FINALIZER_FOREGROUND)) {
      node.deletingDependents = false;
    }
  }

  /** A DELETED event (or a virtual delete): dependents and waiting owners are re-examined. */
  private observeDeleted(uid: string): void {
    const node = this.graph.get(uid);
    if (!node) return;
    this.graph.delete(uid);
    if (node.dependents.size > 0) this.addAbsentOwner(uid);
    for (const dep of node.dependents) {
      if (this.graph.has(dep)) this.attemptToDelete.queue.add(dep);
    }
    for (const ref of node.owners) {
      const owner = this.graph.get(ref.uid);
      if (!owner) continue;
      owner.dependents.delete(uid);
      if (owner.deletingDependents) this.attemptToDelete.queue.add(ref.uid);
      if (!owner.observed && owner.dependents.size === 0) this.graph.delete(ref.uid);
    }
  }

  private addAbsentOwner(uid: string): void {
    if (this.absentOwnerCache.size >= ABSENT_OWNER_CACHE_SIZE) {
      const first = this.absentOwnerCache.values().next().value as string;
      this.absentOwnerCache.delete(first);
    }
    this.absentOwnerCache.add(uid);
  }

  // ---- attemptToDeleteItem ----------------------------------------------------------------

  private getObject(id: Identity) {
    return { type: 'ApiGet' as const, resource: id.resource, namespace: id.namespaced ? id.namespace : undefined, name: id.name };
  }

  /** `attemptToDeleteItem(item)`. */
  *attemptToDeleteItem(uid: string): Sync<SyncError | undefined> {
    const item = this.graph.get(uid);
    if (!item) return undefined;
    if (item.beingDeleted && !item.deletingDependents) return undefined;
    const res: ApiResult = yield* call(this.getObject(item.identity));
    if (isNotFound(res) || (isOk(res) && objectOf<KubeObject>(res).metadata.uid !== uid)) {
      // enqueueVirtualDeleteEvent: the object is gone; process it as a deletion.
      this.observeDeleted(uid);
      return undefined;
    }
    if (!isOk(res)) return syncErrorOf(res, 'get object');
    const latest = objectOf<KubeObject>(res);
    if (item.deletingDependents) return yield* this.processDeletingDependentsItem(item);

    const refs = latest.metadata.ownerReferences ?? [];
    if (refs.length === 0) return undefined;
    const cls = yield* this.classifyReferences(item, refs);
    if ('error' in cls) return cls.error;
    const { solid, dangling, waiting } = cls;
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return undefined;
      // Remove dangling references and references to owners waiting for their dependents.
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      const p: ApiResult = yield* call(this.patchOwnerRefs(item, latest, refs.filter((r) => !drop.has(r.uid))));
      return isOk(p) || isNotFound(p) ? undefined : syncErrorOf(p, 'patch ownerReferences');
    }
    let policy: DeletionPropagation;
    if (waiting.length > 0 && item.dependents.size > 0) policy = 'Foreground';
    else {
      const fins = latest.metadata.finalizers ?? [];
      policy = fins.includes(FINALIZER_ORPHAN) ? 'Orphan' : fins.includes(FINALIZER_FOREGROUND) ? 'Foreground' : 'Background';
    }
    return yield* this.deleteObject(item, policy);
  }

  /** `classifyReferences`: solid / dangling / waitingForDependentsDeletion owners (`isDangling`). */
  private *classifyReferences(
    item: GraphNode,
    refs: readonly OwnerReference[],
  ): Sync<{ solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] } | { error: SyncError }> {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      if (this.absentOwnerCache.has(ref.uid)) {
        dangling.push(ref);
        continue;
      }
      const kr = KIND_RESOURCE[ref.kind];
      if (!kr) {
        solid.push(ref);
        continue;
      }
      const res: ApiResult = yield* call({ type: 'ApiGet', resource: kr.resource, namespace: kr.namespaced ? item.identity.namespace : undefined, name: ref.name });
      if (isNotFound(res)) {
        this.addAbsentOwner(ref.uid);
        dangling.push(ref);
        continue;
      }
      if (!isOk(res)) return { error: syncErrorOf(res, 'get owner') };
      const owner = objectOf<KubeObject>(res);
      if (owner.metadata.uid !== ref.uid) {
        this.addAbsentOwner(ref.uid);
        dangling.push(ref);
      } else if (owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FINALIZER_FOREGROUND)) {
        waiting.push(ref);
      } else solid.push(ref);
    }
    return { solid, dangling, waiting };
  }

  /** `processDeletingDependentsItem`: remove the finalizer, or push blocking dependents to deletion. */
  private *processDeletingDependentsItem(item: GraphNode): Sync<SyncError | undefined> {
    const blocking: string[] = [];
    for (const dep of item.dependents) {
      const d = this.graph.get(dep);
      if (!d) continue;
      if (d.owners.some((r) => r.uid === item.identity.uid && r.blockOwnerDeletion)) blocking.push(dep);
    }
    if (blocking.length === 0) return yield* this.removeFinalizer(item, FINALIZER_FOREGROUND);
    for (const dep of blocking) if (!this.graph.get(dep)!.deletingDependents) this.attemptToDelete.queue.add(dep);
    return undefined;
  }

  /** `deleteObject(item, policy)`: DELETE with a UID precondition and the propagation policy. */
  private *deleteObject(item: GraphNode, policy: DeletionPropagation): Sync<SyncError | undefined> {
    const id = item.identity;
    const res: ApiResult = yield* call({
      type: 'ApiDelete',
      resource: id.resource,
      namespace: id.namespaced ? id.namespace : undefined,
      name: id.name,
      options: { preconditions: { uid: id.uid }, propagationPolicy: policy },
    });
    this.env.trace('controller.gc.delete', `${id.resource} ${id.namespace}/${id.name} (${policy}): ${res.code}`, {
      resource: id.resource,
      namespace: id.namespace,
      name: id.name,
      uid: id.uid,
      policy,
      code: res.code,
    });
    if (isOk(res) || isNotFound(res) || isConflict(res)) return undefined;
    return syncErrorOf(res, 'delete dependent');
  }

  /**
   * `removeFinalizer`: GET the latest object and PATCH its finalizers without `finalizer`
   * (resourceVersion-guarded JSON merge patch; a conflict requeues).
   */
  private *removeFinalizer(item: GraphNode, finalizer: string): Sync<SyncError | undefined> {
    const got: ApiResult = yield* call(this.getObject(item.identity));
    if (isNotFound(got)) return undefined;
    if (!isOk(got)) return syncErrorOf(got, 'get owner');
    const latest = objectOf<KubeObject>(got);
    if (latest.metadata.uid !== item.identity.uid) return undefined;
    const fins = latest.metadata.finalizers ?? [];
    if (!fins.includes(finalizer)) return undefined;
    const id = item.identity;
    const res: ApiResult = yield* call({
      type: 'ApiPatch',
      resource: id.resource,
      namespace: id.namespaced ? id.namespace : undefined,
      name: id.name,
      patchType: 'merge',
      patch: { metadata: { resourceVersion: latest.metadata.resourceVersion, finalizers: fins.filter((f) => f !== finalizer) } },
    });
    this.env.trace('controller.gc.removeFinalizer', `${id.resource} ${id.namespace}/${id.name} -${finalizer}: ${res.code}`, {
      resource: id.resource,
      namespace: id.namespace,
      name: id.name,
      uid: id.uid,
      finalizer,
      code: res.code,
    });
    return isOk(res) || isNotFound(res) ? undefined : syncErrorOf(res, 'remove finalizer');
  }

  private patchOwnerRefs(item: GraphNode, latest: KubeObject, refs: OwnerReference[]) {
    const id = item.identity;
    return {
      type: 'ApiPatch' as const,
      resource: id.resource,
      namespace: id.namespaced ? id.namespace : undefined,
      name: latest.metadata.name ?? id.name,
      patchType: 'merge' as const,
      patch: { metadata: { ownerReferences: refs.length > 0 ? refs : null } },
    };
  }

  // ---- attemptToOrphan --------------------------------------------------------------------

  /** `attemptToOrphanWorker`: strip the owner from each dependent, then drop the orphan finalizer. */
  *attemptToOrphanItem(uid: string): Sync<SyncError | undefined> {
    const owner = this.graph.get(uid);
    if (!owner) return undefined;
    const deps = [...owner.dependents].map((d) => this.graph.get(d)).filter((d): d is GraphNode => d !== undefined);
    const results = yield* all(
      deps.map((d) => {
        const id = d.identity;
        const refs = d.owners.filter((r) => r.uid !== uid);
        return {
          type: 'ApiPatch' as const,
          resource: id.resource,
          namespace: id.namespaced ? id.namespace : undefined,
          name: id.name,
          patchType: 'merge' as const,
          patch: { metadata: { ownerReferences: refs.length > 0 ? refs : null } },
        };
      }),
    );
    for (const r of results) if (!isOk(r) && !isNotFound(r)) return syncErrorOf(r, 'orphan dependent');
    this.env.trace('controller.gc.orphan', `${owner.identity.resource} ${owner.identity.namespace}/${owner.identity.name}: ${deps.length} dependents orphaned`, {
      resource: owner.identity.resource,
      namespace: owner.identity.namespace,
      name: owner.identity.name,
      uid,
      dependents: deps.length,
    });
    return yield* this.removeFinalizer(owner, FINALIZER_ORPHAN);
  }
}
