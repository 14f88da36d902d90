/**
 * The generic registry store: k8s.io/apiserver v0.22.8
 * `pkg/registry/generic/registry/store.go` — Create, Get, List, Update (with
 * `ShouldDeleteDuringUpdate` → `deleteWithoutFinalizers`), Delete (with `rest.BeforeDelete`,
 * `deletionFinalizersForGarbageCollection`, `updateForGracefulDeletionAndFinalizers`,
 * `markAsDeleting`, `finalizeDelete`) — over the {@link Storage} interface, plus
 * `pkg/storage/errors/storage.go`'s Interpret*Error mappings. Steps keep upstream's order.
 *
 * Objects handed in are never mutated; the store works on private copies.
 */
import type { DeleteOptions, KubeList, KubeObject, Status } from '@podsim/api';
import { FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS } from '@podsim/api';
import {
  type GroupResource,
  OPTIMISTIC_LOCK_ERROR_MSG,
  field,
  isStatus,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newInternalError,
  newInvalid,
  newNotFound,
  newServerTimeoutForKind,
  successStatus,
} from '../errors.js';
import { canonicalizeMeta, deepClone } from '../objects.js';
import { type ParsedFieldSelector, fieldsMatch, selectableFields } from '../selectors/fields.js';
import { type ParsedLabelSelector, labelsMatch } from '@podsim/api';
import {
  ErrCodeInvalidObj,
  ErrCodeKeyExists,
  ErrCodeKeyNotFound,
  ErrCodeResourceVersionConflicts,
  type RegistrySignal,
  type StepError,
  type Storage,
  type StoragePreconditions,
  isStepError,
  isStorageError,
  storageErrorMessage,
} from '../storage/interfaces.js';
import { validatePathSegmentName } from '../validation.js';
import { beforeCreate, beforeDelete, beforeUpdate } from './rest.js';
import type { RESTStrategy, RequestContext } from './strategy.js';

/** Static description of one REST resource. */
export interface StoreOptions<T extends KubeObject> {
  /** The qualified resource errors name (`pods`, `deployments.apps`). */
  readonly resource: GroupResource;
  /** `kind` / `apiVersion` stamped on stored objects, and the list kind. */
  readonly kind: string;
  readonly apiVersion: string;
  readonly listKind: string;
  /** etcd key prefix, e.g. `/registry/pods` (nodes live under `/registry/minions`). */
  readonly keyPrefix: string;
  readonly strategy: RESTStrategy<T>;
  /** `ReturnDeletedObject`: pods and namespaces return the object from DELETE, others a Status. */
  readonly returnDeletedObject: boolean;
  /** `EnableGarbageCollection` (true for every kube-apiserver store). */
  readonly enableGarbageCollection: boolean;
  /**
   * `Store.ShouldDeleteDuringUpdate` (default {@link shouldDeleteDuringUpdate}); namespaces add
   * their spec.finalizers check (`ShouldDeleteNamespaceDuringUpdate`).
   */
  readonly shouldDeleteDuringUpdate?: (obj: KubeObject, existing: KubeObject) => boolean;
}

/** `rest.UpdatedObjectInfo`: preconditions plus a function from the current object to the desired one. */
export interface UpdatedObjectInfo {
  readonly preconditions?: StoragePreconditions;
  /** Returns a private, mutable object (or an error). Must not mutate `existing`. */
  updatedObject(existing: KubeObject): KubeObject | Status;
}

export interface UpdateResult {
  readonly object: KubeObject;
  readonly created: boolean;
}

export interface DeleteResult {
  /** The deleted/updated object (ReturnDeletedObject) or a success Status. */
  readonly object: KubeObject | Status;
  readonly wasDeleted: boolean;
}

const signal = (s: RegistrySignal['signal']): RegistrySignal => ({ kind: 'RegistrySignal', signal: s });

function isSignal(x: unknown, s: RegistrySignal['signal']): boolean {
  return (x as RegistrySignal | undefined)?.kind === 'RegistrySignal' && (x as RegistrySignal).signal === s;
}

/**
 * The object with a private top level and `metadata` (the delete path's DeepCopy): BeforeDelete,
 * markAsDeleting, the GC finalizer update and canonicalizeMeta only ever assign metadata fields,
 * and stored objects are immutable, so the rest is shared with the stored object as a watch
 * event or GET would share it.
 */
function copyMeta<O extends KubeObject>(o: O): O {
  return { ...o, metadata: { ...o.metadata } };
}

/** `ShouldDeleteDuringUpdate`: no finalizers left, and the old object was being deleted with grace nil/0. */
export function shouldDeleteDuringUpdate(obj: KubeObject, existing: KubeObject): boolean {
  if ((obj.metadata.finalizers ?? []).length > 0) return false;
  if (!existing.metadata.deletionTimestamp) return false;
  const g = existing.metadata.deletionGracePeriodSeconds;
  return g === undefined || g === 0;
}

export class Store<T extends KubeObject = KubeObject> {
  constructor(
    readonly storage: Storage,
    readonly opts: StoreOptions<T>,
  ) {}

  get strategy(): RESTStrategy<T> {
    return this.opts.strategy;
  }

  /** `NamespaceKeyFunc` / `NoNamespaceKeyFunc`. */
  keyFunc(rctx: RequestContext, name: string): string | Status {
    if (this.opts.strategy.namespaceScoped && !rctx.namespace) return newBadRequest('Namespace parameter required.');
    if (!name) return newBadRequest('Name parameter required.');
    const msgs = validatePathSegmentName(name, false);
    if (msgs.length) return newBadRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${msgs.join(';')}`);
    return this.opts.strategy.namespaceScoped ? `${this.opts.keyPrefix}/${rctx.namespace}/${name}` : `${this.opts.keyPrefix}/${name}`;
  }

  /** The key prefix a list or watch in `namespace` (all namespaces if undefined) covers. */
  listPrefix(namespace: string | undefined): string {
    return this.opts.strategy.namespaceScoped && namespace ? `${this.opts.keyPrefix}/${namespace}/` : `${this.opts.keyPrefix}/`;
  }

  // ---- Interpret*Error (pkg/storage/errors/storage.go) ----------------------------------------

  private interpretCreateError(err: StepError, name: string): Status {
    if (isStorageError(err)) {
      if (err.code === ErrCodeKeyExists) return newAlreadyExists(this.opts.resource, name);
      return newInternalError(storageErrorMessage(err));
    }
    return this.passThrough(err);
  }

  /** `InterpretUpdateError` (NotFound, Conflict, else InternalError); Status errors pass through. */
  interpretUpdateError(err: StepError, name: string): Status {
    if (isStorageError(err)) {
      if (err.code === ErrCodeResourceVersionConflicts || err.code === ErrCodeKeyExists || err.code === ErrCodeInvalidObj) {
        return newConflict(this.opts.resource, name, storageErrorMessage(err));
      }
      if (err.code === ErrCodeKeyNotFound) return newNotFound(this.opts.resource, name);
      return newInternalError(storageErrorMessage(err));
    }
    return this.passThrough(err);
  }

  private interpretDeleteError(err: StepError, name: string): Status {
    if (isStorageError(err)) {
      if (err.code === ErrCodeKeyNotFound) return newNotFound(this.opts.resource, name);
      if (err.code === ErrCodeResourceVersionConflicts || err.code === ErrCodeKeyExists || err.code === ErrCodeInvalidObj) {
        return newConflict(this.opts.resource, name, storageErrorMessage(err));
      }
      return newInternalError(storageErrorMessage(err));
    }
    return this.passThrough(err);
  }

  private passThrough(err: StepError): Status {
    if (isStatus(err)) return err;
    // A registry sentinel escaping is a programming error.
    throw new Error(`unexpected ${err.kind} ${JSON.stringify(err)}`);
  }

  private stampType(obj: KubeObject): void {
    obj.kind = this.opts.kind;
    obj.apiVersion = this.opts.apiVersion;
  }

  // ---- Create -----------------------------------------------------------------------------------

  /**
   * `Store.Create`: BeforeCreate on a private copy of `input` (or on `input` itself when the
   * caller passes `owned`), then `Storage.Create`.
   */
  create(rctx: RequestContext, input: KubeObject, dryRun = false, owned = false): KubeObject | Status {
    const obj = (owned ? input : deepClone(input)) as T;
    obj.metadata ??= {};
    this.stampType(obj);
    const err = beforeCreate(this.opts.strategy, rctx, obj);
    if (err) return err;
    canonicalizeMeta(obj.metadata);
    const name = obj.metadata.name!;
    const key = this.keyFunc(rctx, name);
    if (typeof key !== 'string') return key;
    const out = this.storage.create(key, obj, dryRun);
    if (isStepError(out)) {
      let st = this.interpretCreateError(out, name);
      // rest.CheckGeneratedNameError: a generated name that collides is a ServerTimeout.
      if (st.reason === 'AlreadyExists' && obj.metadata.generateName) st = newServerTimeoutForKind(this.opts.strategy.groupKind, 'POST', 0);
      if (st.reason === 'AlreadyExists' && this.storage.get(key)?.metadata.deletionTimestamp) {
        st = { ...st, message: `object is being deleted: ${st.message}` };
      }
      return st;
    }
    return out;
  }

  // ---- Get / List -------------------------------------------------------------------------------

  /** `Store.Get`: the stored object (shared, immutable) or 404. */
  get(rctx: RequestContext, name: string): KubeObject | Status {
    const key = this.keyFunc(rctx, name);
    if (typeof key !== 'string') return key;
    return this.storage.get(key) ?? newNotFound(this.opts.resource, name);
  }

  /** `Store.List` with a SelectionPredicate; items in key order, RV = the storage revision. */
  list(namespace: string | undefined, label: ParsedLabelSelector, fields: ParsedFieldSelector): KubeList {
    const resource = this.opts.resource.resource;
    const items = this.storage
      .list(this.listPrefix(namespace))
      .filter((o) => labelsMatch(label, o.metadata.labels) && (fields.terms.length === 0 || fieldsMatch(fields, selectableFields(resource, o))));
    return { kind: this.opts.listKind, apiVersion: this.opts.apiVersion, metadata: { resourceVersion: String(this.storage.revision) }, items };
  }

  // ---- Update -----------------------------------------------------------------------------------

  /**
   * `Store.Update`: GuaranteedUpdate with the optimistic-concurrency check (409 on a stale
   * resourceVersion unless AllowUnconditionalUpdate and none given), BeforeUpdate, and
   * `ShouldDeleteDuringUpdate` turning the update that empties the finalizers of a deleting
   * object into a storage delete.
   */
  update(rctx: RequestContext, name: string, objInfo: UpdatedObjectInfo, dryRun = false, forceAllowCreate = false): UpdateResult | Status {
    const key = this.keyFunc(rctx, name);
    if (typeof key !== 'string') return key;
    const strategy = this.opts.strategy;
    let creating = false;
    let creatingObj: KubeObject | undefined;
    let deleteObj: KubeObject | undefined;
    const out = this.storage.guaranteedUpdate(
      key,
      true,
      objInfo.preconditions,
      (existing) => {
        const existingResourceVersion = existing ? Number(existing.metadata.resourceVersion) : 0;
        if (existingResourceVersion === 0 && !strategy.allowCreateOnUpdate && !forceAllowCreate) {
          return newNotFound(this.opts.resource, name);
        }
        // Given the existing object, get the new object
        const obj = objInfo.updatedObject(existing ?? { metadata: {} });
        if (isStatus(obj)) return obj;
        obj.metadata ??= {};
        this.stampType(obj);
        const rvText = obj.metadata.resourceVersion;
        if (rvText !== undefined && rvText !== '' && !/^\d+$/.test(rvText)) {
          return newBadRequest(`invalid resource version: ${JSON.stringify(rvText)}`);
        }
        const newResourceVersion = rvText ? Number(rvText) : 0;
        // If AllowUnconditionalUpdate() is true and the object specified by the user does not
        // have a resource version, then we populate it with the latest version. Else, we check
        // that the version specified by the user matches the version of latest storage object.
        const doUnconditionalUpdate = newResourceVersion === 0 && strategy.allowUnconditionalUpdate;
        if (existingResourceVersion === 0) {
          creating = true;
          creatingObj = obj;
          delete obj.metadata.resourceVersion;
          const err = beforeCreate(strategy, rctx, obj as T);
          if (err) return err;
          canonicalizeMeta(obj.metadata);
          return obj;
        }
        creating = false;
        creatingObj = undefined;
        if (doUnconditionalUpdate) {
          obj.metadata.resourceVersion = existing!.metadata.resourceVersion;
        } else {
          if (newResourceVersion === 0) {
            // TODO (upstream): the Invalid error should have a field for Resource.
            return newInvalid({ group: this.opts.resource.group, kind: this.opts.resource.resource }, name, [
              field.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
            ]);
          }
          if (newResourceVersion !== existingResourceVersion) {
            return newConflict(this.opts.resource, name, OPTIMISTIC_LOCK_ERROR_MSG);
          }
        }
        const err = beforeUpdate(strategy, rctx, obj as T, existing as T);
        if (err) return err;
        canonicalizeMeta(obj.metadata);
        // Check the default delete-during-update conditions.
        if ((this.opts.shouldDeleteDuringUpdate ?? shouldDeleteDuringUpdate)(obj, existing!)) {
          deleteObj = obj;
          return signal('errEmptiedFinalizers');
        }
        return obj;
      },
      dryRun,
    );
    if (isStepError(out)) {
      // delete the object
      if (isSignal(out, 'errEmptiedFinalizers')) return this.deleteWithoutFinalizers(name, key, deleteObj!, objInfo.preconditions, dryRun);
      if (creating) {
        let st = this.interpretCreateError(out, name);
        if (st.reason === 'AlreadyExists' && creatingObj?.metadata.generateName) st = newServerTimeoutForKind(strategy.groupKind, 'POST', 0);
        return st;
      }
      return this.interpretUpdateError(out, name);
    }
    return { object: out, created: creating };
  }

  /**
   * `deleteWithoutFinalizers`: the storage delete an update triggered. Only DELETED is emitted;
   * the client gets the object it sent (upstream: "clients are expecting an updated object if
   * a PUT succeeded").
   */
  private deleteWithoutFinalizers(
    name: string,
    key: string,
    obj: KubeObject,
    preconditions: StoragePreconditions | undefined,
    dryRun: boolean,
  ): UpdateResult | Status {
    const res = this.storage.delete(key, preconditions, undefined, dryRun);
    if (isStepError(res)) {
      // Deletion is racy, i.e., there could be multiple update requests to remove all
      // finalizers from the object, so we ignore the NotFound error.
      if (isStorageError(res) && res.code === ErrCodeKeyNotFound) return { object: obj, created: false };
      return this.interpretDeleteError(res, name);
    }
    return { object: obj, created: false };
  }

  // ---- Delete -----------------------------------------------------------------------------------

  /** `shouldOrphanDependents`. */
  private shouldOrphanDependents(obj: KubeObject, options: DeleteOptions): boolean {
    const policy = this.opts.strategy.defaultGarbageCollectionPolicy?.() ?? '';
    if (policy === 'Unsupported') return false;
    // An explicit policy was set at deletion time, that overrides everything
    if (options.orphanDependents !== undefined) return options.orphanDependents;
    if (options.propagationPolicy !== undefined) {
      switch (options.propagationPolicy) {
        case 'Orphan':
          return true;
        case 'Background':
        case 'Foreground':
          return false;
      }
    }
    // If a finalizer is set in the object, it overrides the default
    for (const f of obj.metadata.finalizers ?? []) {
      if (f === FINALIZER_ORPHAN_DEPENDENTS) return true;
      if (f === FINALIZER_DELETE_DEPENDENTS) return false;
    }
    return policy === 'OrphanDependents';
  }

  /** `shouldDeleteDependents`. */
  private shouldDeleteDependents(obj: KubeObject, options: DeleteOptions): boolean {
    if (this.opts.strategy.defaultGarbageCollectionPolicy?.() === 'Unsupported') return false;
    if (options.orphanDependents !== undefined) return false;
    if (options.propagationPolicy !== undefined) {
      switch (options.propagationPolicy) {
        case 'Foreground':
          return true;
        case 'Background':
        case 'Orphan':
          return false;
      }
    }
    for (const f of obj.metadata.finalizers ?? []) {
      if (f === FINALIZER_DELETE_DEPENDENTS) return true;
      if (f === FINALIZER_ORPHAN_DEPENDENTS) return false;
    }
    return false;
  }

  /**
   * `deletionFinalizersForGarbageCollection`: `[changed, finalizers]` after removing both GC
   * finalizers and adding back the one the options (or existing finalizers, or the default
   * policy) ask for.
   */
  deletionFinalizersForGarbageCollection(obj: KubeObject, options: DeleteOptions): [boolean, string[]] {
    if (!this.opts.enableGarbageCollection) return [false, []];
    const shouldOrphan = this.shouldOrphanDependents(obj, options);
    const shouldDeleteDependentInForeground = this.shouldDeleteDependents(obj, options);
    const existing = obj.metadata.finalizers ?? [];
    const newFinalizers = existing.filter((f) => f !== FINALIZER_ORPHAN_DEPENDENTS && f !== FINALIZER_DELETE_DEPENDENTS);
    if (shouldOrphan) newFinalizers.push(FINALIZER_ORPHAN_DEPENDENTS);
    if (shouldDeleteDependentInForeground) newFinalizers.push(FINALIZER_DELETE_DEPENDENTS);
    const a = new Set(existing);
    const b = new Set(newFinalizers);
    const equal = a.size === b.size && [...a].every((f) => b.has(f));
    return equal ? [false, existing] : [true, newFinalizers];
  }

  /** `markAsDeleting`: dgps = 0, dts = now unless already earlier; generation+1 on first mark. */
  private markAsDeleting(obj: KubeObject, rctx: RequestContext): void {
    const meta = obj.metadata;
    if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation = meta.generation! + 1;
    const existing = meta.deletionTimestamp ? rctx.clock.parse(meta.deletionTimestamp) : undefined;
    if (existing === undefined || existing > rctx.now) meta.deletionTimestamp = rctx.clock.format(rctx.now);
    meta.deletionGracePeriodSeconds = 0;
  }

  /** `finalizeDelete`: the object itself (ReturnDeletedObject) or a success Status naming it. */
  private finalizeDelete(obj: KubeObject): KubeObject | Status {
    if (this.opts.returnDeletedObject) return obj;
    // Return information about the deleted object, which enables clients to verify that the
    // object was actually deleted and not waiting for finalizers.
    return successStatus(200, {
      name: obj.metadata.name,
      ...(this.opts.resource.group ? { group: this.opts.resource.group } : {}),
      kind: this.opts.resource.resource, // Yes we set Kind field to resource.
      uid: obj.metadata.uid,
    });
  }

  /**
   * `updateForGracefulDeletionAndFinalizers`: inside GuaranteedUpdate on the latest object,
   * re-run BeforeDelete, apply GC finalizers, and either write the graceful update, mark the
   * object deleting (finalizers pending), or signal "delete now".
   */
  private updateForGracefulDeletionAndFinalizers(
    rctx: RequestContext,
    name: string,
    key: string,
    options: DeleteOptions,
    preconditions: StoragePreconditions,
    input: KubeObject,
    dryRun: boolean,
  ): { err?: Status; ignoreNotFound: boolean; deleteImmediately: boolean; out?: KubeObject | Status; lastExisting?: KubeObject } {
    let lastGraceful = 0;
    let pendingFinalizers = false;
    let lastExisting: KubeObject | undefined;
    const res = this.storage.guaranteedUpdate(
      key,
      false,
      preconditions,
      (stored) => {
        const existing = copyMeta(stored!);
        const bd = beforeDelete(this.opts.strategy, rctx, existing as T, options);
        if (isStatus(bd)) return bd;
        if (bd.gracefulPending) return signal('errAlreadyDeleting');
        // Add/remove the orphan finalizer as the options dictates. Note that this occurs after
        // checking pendingGraceful, so finalizers cannot be updated via DeleteOptions if
        // deletion has started.
        const [needsUpdate, newFinalizers] = this.deletionFinalizersForGarbageCollection(existing, options);
        if (needsUpdate) existing.metadata.finalizers = newFinalizers;
        pendingFinalizers = (existing.metadata.finalizers ?? []).length !== 0;
        if (!bd.graceful) {
          // set the DeleteGracePeriods to 0 if the object has pendingFinalizers but not supporting graceful deletion
          if (pendingFinalizers) {
            this.markAsDeleting(existing, rctx);
            canonicalizeMeta(existing.metadata);
            return existing;
          }
          return signal('errDeleteNow');
        }
        lastGraceful = options.gracePeriodSeconds!;
        canonicalizeMeta(existing.metadata);
        lastExisting = existing;
        return existing;
      },
      dryRun,
    );
    if (!isStepError(res)) {
      // If there are pending finalizers, we never delete the object immediately.
      if (pendingFinalizers) return { ignoreNotFound: false, deleteImmediately: false, out: res, lastExisting };
      if (lastGraceful > 0) return { ignoreNotFound: false, deleteImmediately: false, out: res, lastExisting };
      // If we are here, the registry supports grace period mechanism and we are intentionally
      // delete gracelessly. In this case, we may enter a race with other k8s components. If
      // other component wins the race, the object will not be found, and we should tolerate the
      // NotFound error. See https://github.com/kubernetes/kubernetes/issues/19403 for details.
      return { ignoreNotFound: true, deleteImmediately: true, out: res, lastExisting };
    }
    if (isSignal(res, 'errDeleteNow')) {
      // we've updated the object to have a zero grace period, or it's already at 0, so we
      // should fall through and truly delete the object.
      return { ignoreNotFound: false, deleteImmediately: true, lastExisting };
    }
    if (isSignal(res, 'errAlreadyDeleting')) {
      return { ignoreNotFound: false, deleteImmediately: false, out: this.finalizeDelete(input), lastExisting };
    }
    return { err: this.interpretUpdateError(res, name), ignoreNotFound: false, deleteImmediately: false, lastExisting };
  }

  /**
   * `Store.Delete`. `options` undefined means `NewDeleteOptions(0)` (legacy internal callers;
   * the HTTP handler always passes an object, `{}` when the client sent none).
   */
  delete(rctx: RequestContext, name: string, optionsIn: DeleteOptions | undefined, dryRunIn?: boolean): DeleteResult | Status {
    const key = this.keyFunc(rctx, name);
    if (typeof key !== 'string') return key;
    const stored = this.storage.get(key);
    if (!stored) return newNotFound(this.opts.resource, name);
    const obj = copyMeta(stored);
    // support older consumers of delete by treating "nil" as delete immediately
    const options: DeleteOptions = optionsIn ? deepClone(optionsIn) : { gracePeriodSeconds: 0 };
    const dryRun = dryRunIn ?? (options.dryRun ?? []).includes('All');
    const preconditions: { uid?: string; resourceVersion?: string } = {};
    if (options.preconditions?.uid !== undefined) preconditions.uid = options.preconditions.uid;
    if (options.preconditions?.resourceVersion !== undefined) preconditions.resourceVersion = options.preconditions.resourceVersion;
    const bd = beforeDelete(this.opts.strategy, rctx, obj as T, options);
    if (isStatus(bd)) return bd;
    // this means finalizers cannot be updated via DeleteOptions if a deletion is already pending
    if (bd.gracefulPending) return { object: this.finalizeDelete(obj), wasDeleted: false };
    // check if obj has pending finalizers
    const pendingFinalizers = (obj.metadata.finalizers ?? []).length !== 0;
    let ignoreNotFound = false;
    let deleteImmediately = true;
    let lastExisting: KubeObject | undefined;
    let out: KubeObject | Status | undefined;
    // Handle combinations of graceful deletion and finalization by issuing the correct updates.
    const [shouldUpdateFinalizers] = this.deletionFinalizersForGarbageCollection(obj, options);
    if (bd.graceful || pendingFinalizers || shouldUpdateFinalizers) {
      const r = this.updateForGracefulDeletionAndFinalizers(rctx, name, key, options, preconditions, obj, dryRun);
      if (r.err) return r.err;
      ({ ignoreNotFound, deleteImmediately, out, lastExisting } = r);
      // Update the preconditions.ResourceVersion if set since we updated the object.
      if (deleteImmediately && preconditions.resourceVersion !== undefined && out && !isStatus(out)) {
        preconditions.resourceVersion = out.metadata.resourceVersion;
      }
    }
    if (!deleteImmediately) return { object: out!, wasDeleted: false };
    // A dry run stops here: deleting would only return the stored object without the update.
    if (dryRun && out) return { object: out, wasDeleted: true };
    // delete immediately, or no graceful deletion supported
    const deleted = this.storage.delete(key, preconditions, undefined, dryRun);
    if (isStepError(deleted)) {
      if (isStorageError(deleted) && deleted.code === ErrCodeKeyNotFound && ignoreNotFound && lastExisting) {
        // The lastExisting object may not be the last state of the object before its
        // deletion, but it's the best approximation.
        return { object: this.finalizeDelete(lastExisting), wasDeleted: true };
      }
      return this.interpretDeleteError(deleted, name);
    }
    return { object: this.finalizeDelete(deleted), wasDeleted: true };
  }
}
