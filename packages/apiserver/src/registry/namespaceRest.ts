/**
 * Namespace REST storage: kubernetes v1.22 `pkg/registry/core/namespace/storage/storage.go` —
 * `REST.Delete` (the first DELETE only sets deletionTimestamp and phase Terminating, with a UID
 * precondition; later ones answer the namespace unchanged while spec.finalizers is non-empty and
 * go to the generic store once it is empty) and `ShouldDeleteNamespaceDuringUpdate` (the
 * finalize or update that leaves spec.finalizers and metadata.finalizers empty on a deleting
 * namespace removes it). The namespace controller (packages/controllers/src/namespace/) empties
 * the namespace and removes the `kubernetes` finalizer through `namespaces/{name}/finalize`.
 */
import type { DeleteOptions, KubeObject, Namespace, Status } from '@podsim/api';
import { FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS } from '@podsim/api';
import { isStatus, newConflict, newInternalError } from '../errors.js';
import { canonicalizeMeta } from '../objects.js';
import { isStepError } from '../storage/interfaces.js';
import { type DeleteResult, type Store, shouldDeleteDuringUpdate } from './store.js';
import type { RequestContext } from './strategy.js';

const NAMESPACES = { group: '', resource: 'namespaces' };

/** `ShouldDeleteNamespaceDuringUpdate`: spec.finalizers empty, and the generic conditions. */
export function shouldDeleteNamespaceDuringUpdate(obj: KubeObject, existing: KubeObject): boolean {
  return ((obj as Namespace).spec?.finalizers ?? []).length === 0 && shouldDeleteDuringUpdate(obj, existing);
}

/** `shouldHaveOrphanFinalizer`. */
function shouldHaveOrphanFinalizer(options: DeleteOptions, have: boolean): boolean {
  if (options.orphanDependents !== undefined) return options.orphanDependents;
  if (options.propagationPolicy !== undefined) return options.propagationPolicy === 'Orphan';
  return have;
}

/** `shouldHaveDeleteDependentsFinalizer`. */
function shouldHaveDeleteDependentsFinalizer(options: DeleteOptions, have: boolean): boolean {
  if (options.orphanDependents !== undefined) return options.orphanDependents === false;
  if (options.propagationPolicy !== undefined) return options.propagationPolicy === 'Foreground';
  return have;
}

/**
 * `REST.Delete` of a namespace. `options` is the handler's private copy (`{}` when the client
 * sent none). Returns the namespace (200; `wasDeleted` false while it terminates) or an error
 * Status: 404, 409 on a failed UID / resourceVersion precondition, 500 on a storage error.
 */
export function deleteNamespace(store: Store<Namespace>, rctx: RequestContext, name: string, options: DeleteOptions): DeleteResult | Status {
  const got = store.get(rctx, name);
  if (isStatus(got)) return got;
  const namespace = got as Namespace;
  // Ensure we have a UID precondition
  const uid = options.preconditions?.uid ?? namespace.metadata.uid;
  if (uid !== namespace.metadata.uid) {
    return newConflict(NAMESPACES, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${namespace.metadata.uid ?? ''}`);
  }
  const rv = options.preconditions?.resourceVersion;
  if (rv !== undefined && rv !== namespace.metadata.resourceVersion) {
    return newConflict(NAMESPACES, name, `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${namespace.metadata.resourceVersion ?? ''}`);
  }
  const preconditioned: DeleteOptions = { ...options, preconditions: { ...options.preconditions, uid } };
  const dryRun = (options.dryRun ?? []).includes('All');

  // upon first request to delete, we switch the phase to start namespace termination
  if (!namespace.metadata.deletionTimestamp) {
    const key = store.keyFunc(rctx, name);
    if (typeof key !== 'string') return key;
    const out = store.storage.guaranteedUpdate(
      key,
      false,
      { uid, ...(rv !== undefined ? { resourceVersion: rv } : {}) },
      (stored) => {
        const existing = stored as Namespace;
        const meta = { ...existing.metadata };
        // Set the deletion timestamp if needed
        meta.deletionTimestamp ??= rctx.clock.format(rctx.now);
        // Set the namespace phase to terminating, if needed
        const status = existing.status?.phase === 'Terminating' ? existing.status : { ...existing.status, phase: 'Terminating' as const };
        // the finalizers we should ensure on namespace (kept in their order, new ones appended)
        const current = meta.finalizers ?? [];
        const want = new Map([
          [FINALIZER_ORPHAN_DEPENDENTS, shouldHaveOrphanFinalizer(options, current.includes(FINALIZER_ORPHAN_DEPENDENTS))],
          [FINALIZER_DELETE_DEPENDENTS, shouldHaveDeleteDependentsFinalizer(options, current.includes(FINALIZER_DELETE_DEPENDENTS))],
        ]);
        if ([...want].some(([f, has]) => current.includes(f) !== has)) {
          meta.finalizers = [...current.filter((f) => want.get(f) !== false), ...[...want].filter(([f, has]) => has && !current.includes(f)).map(([f]) => f)];
        }
        canonicalizeMeta(meta);
        return { ...existing, metadata: meta, status };
      },
      dryRun,
    );
    if (isStepError(out)) {
      const st = store.interpretUpdateError(out, name);
      return isStatus(st) ? st : newInternalError(String(out));
    }
    return { object: out, wasDeleted: false };
  }

  // prior to final deletion, we must ensure that finalizers is empty
  if ((namespace.spec?.finalizers ?? []).length !== 0) return { object: namespace, wasDeleted: false };
  return store.delete(rctx, name, preconditioned);
}
