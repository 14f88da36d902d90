/**
 * The storage contract of the registry: k8s.io/apiserver v0.22.8 `pkg/storage/interfaces.go`
 * (`storage.Interface`: Get, List, Create, Delete, GuaranteedUpdate, watch from a revision) and
 * `pkg/storage/errors.go` (StorageError codes and texts, `Preconditions.Check`). The in-memory
 * MVCC store implements it; an etcd-backed store could replace it without touching the registry.
 *
 * Revisions: one global counter, the etcd revision; `metadata.resourceVersion` is its decimal
 * string. Every create / effective update / delete takes the next value. Calls are synchronous
 * (handlers run to completion in one actor), so GuaranteedUpdate never needs to retry.
 */
import type { KubeObject, Status } from '@podsim/api';

/** `storage.StorageError` codes. */
export const ErrCodeKeyNotFound = 1;
export const ErrCodeKeyExists = 2;
export const ErrCodeResourceVersionConflicts = 3;
export const ErrCodeInvalidObj = 4;
export const ErrCodeUnreachable = 5;

const ERR_CODE_TO_MESSAGE: Record<number, string> = {
  1: 'key not found',
  2: 'key exists',
  3: 'resource version conflicts',
  4: 'invalid object',
  5: 'server unreachable',
};

/** `storage.StorageError` as a tagged object. */
export interface StorageError {
  readonly kind: 'StorageError';
  readonly code: number;
  readonly key: string;
  readonly resourceVersion: number;
  readonly additionalErrorMsg: string;
}

export function newStorageError(code: number, key: string, resourceVersion = 0, additionalErrorMsg = ''): StorageError {
  return { kind: 'StorageError', code, key, resourceVersion, additionalErrorMsg };
}

/** `(*StorageError).Error()`. */
export function storageErrorMessage(e: StorageError): string {
  return `StorageError: ${ERR_CODE_TO_MESSAGE[e.code]}, Code: ${e.code}, Key: ${e.key}, ResourceVersion: ${e.resourceVersion}, AdditionalErrorMsg: ${e.additionalErrorMsg}`;
}

export function isStorageError(x: unknown): x is StorageError {
  return x !== null && typeof x === 'object' && (x as { kind?: unknown }).kind === 'StorageError';
}

/** `storage.Preconditions`: checked atomically at update and delete time. */
export interface StoragePreconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/** `Preconditions.Check`: an InvalidObj StorageError with upstream's "Precondition failed" text. */
export function checkPreconditions(p: StoragePreconditions | undefined, key: string, obj: KubeObject): StorageError | undefined {
  if (!p) return undefined;
  if (p.uid !== undefined && p.uid !== obj.metadata.uid) {
    return newStorageError(
      ErrCodeInvalidObj,
      key,
      0,
      `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${obj.metadata.uid ?? ''}`,
    );
  }
  if (p.resourceVersion !== undefined && p.resourceVersion !== obj.metadata.resourceVersion) {
    return newStorageError(
      ErrCodeInvalidObj,
      key,
      0,
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ''}`,
    );
  }
  return undefined;
}

/**
 * A registry-level sentinel returned through GuaranteedUpdate (`errAlreadyDeleting`,
 * `errDeleteNow`, `errEmptiedFinalizers` of `store.go`).
 */
export interface RegistrySignal {
  readonly kind: 'RegistrySignal';
  readonly signal: 'errAlreadyDeleting' | 'errDeleteNow' | 'errEmptiedFinalizers';
}

/** Anything a storage or registry step can fail with. */
export type StepError = Status | StorageError | RegistrySignal;

export function isStepError(x: unknown): x is StepError {
  if (x === null || typeof x !== 'object') return false;
  const k = (x as { kind?: unknown }).kind;
  return k === 'Status' || k === 'StorageError' || k === 'RegistrySignal';
}

/**
 * The update function of GuaranteedUpdate (`storage.UpdateFunc`): gets the current object
 * (undefined when missing and `ignoreNotFound`), returns the desired object or an error that
 * aborts the update. It must not mutate `existing`.
 */
export type UpdateFunc = (existing: KubeObject | undefined) => KubeObject | StepError;

/** `ValidateObjectFunc` run on the current object before a delete is committed. */
export type ValidateDeletion = (existing: KubeObject) => StepError | undefined;

/**
 * One committed write, as the watch machinery sees it (`watchCacheEvent`): the object after the
 * write (for DELETED: the previous object stamped with the delete's revision) and the object
 * before it (absent for ADDED).
 */
export interface StorageEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly key: string;
  /** The storage prefix segment (`pods`, `minions`, `deployments`, …). */
  readonly prefix: string;
  readonly object: KubeObject;
  readonly prevObject?: KubeObject;
  readonly rv: number;
}

/** The result of a watch-from-revision lookup in the bounded history. */
export type HistoryResult =
  | { readonly ok: true; readonly events: readonly StorageEvent[] }
  | { readonly ok: false; readonly tooOld: true; readonly oldest: number }
  | { readonly ok: false; readonly tooOld: false; readonly current: number };

/** `storage.Interface`, synchronous. */
export interface Storage {
  /** The current revision (the RV of the last write, or of the empty store). */
  readonly revision: number;
  get(key: string): KubeObject | undefined;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): KubeObject[];
  /** Creates `obj` at `key` (KeyExists if present). `obj` must not carry a resourceVersion. */
  create(key: string, obj: KubeObject, dryRun?: boolean): KubeObject | StorageError | Status;
  /**
   * Deletes `key` after checking `preconditions` and `validateDeletion` on the current object.
   * Returns the object as it was stored (its last resourceVersion); the DELETED event carries
   * it stamped with the delete's revision.
   */
  delete(key: string, preconditions: StoragePreconditions | undefined, validateDeletion: ValidateDeletion | undefined, dryRun?: boolean): KubeObject | StepError;
  /**
   * `GuaranteedUpdate`: reads the current object, checks `preconditions`, calls `tryUpdate`, and
   * writes the result — unless it is semantically equal to the current object, in which case
   * nothing is written, no event is emitted and the current object (same RV) is returned.
   */
  guaranteedUpdate(
    key: string,
    ignoreNotFound: boolean,
    preconditions: StoragePreconditions | undefined,
    tryUpdate: UpdateFunc,
    dryRun?: boolean,
  ): KubeObject | StepError;
  /** Events with revision > `rv` under `prefix` (410 when the history no longer reaches back). */
  eventsSince(prefix: string, rv: number): HistoryResult;
  /** Registers the one listener that receives every committed write, in revision order. */
  onEvent(listener: (ev: StorageEvent) => void): void;
}
