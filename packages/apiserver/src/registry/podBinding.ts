/**
 * `pods/binding`: kubernetes v1.22 `pkg/registry/core/pod/storage/storage.go` BindingREST
 * (Create → assignPod → setPodHostAndAnnotations). A GuaranteedUpdate straight on storage (no
 * update strategy): the binding's uid / resourceVersion are preconditions; a pod being deleted
 * or already bound is a 409 on `pods/binding`; success sets spec.nodeName, merges annotations,
 * and sets condition PodScheduled=True (`podutil.UpdatePodCondition`). Answers 201 + Status.
 */
import type { Binding, KubeObject, Pod, PodCondition, Status } from '@podsim/api';
import { isStatus, newBadRequest, newConflict, newInternalError, newInvalid, newNotFound, successStatus } from '../errors.js';
import { deepClone } from '../objects.js';
import { ErrCodeInvalidObj, ErrCodeKeyNotFound, isStepError, isStorageError, storageErrorMessage } from '../storage/interfaces.js';
import { validatePodBinding } from '../validation.js';
import type { Store } from './store.js';
import type { RequestContext } from './strategy.js';

const PODS = { group: '', resource: 'pods' };
const PODS_BINDING = { group: '', resource: 'pods/binding' };

/** `podutil.UpdatePodCondition` on a private status copy. */
export function updatePodCondition(pod: Pod, condition: PodCondition, nowText: string): void {
  const status = (pod.status ??= {});
  const conds = (status.conditions ??= []);
  const c: PodCondition = { ...condition, lastTransitionTime: nowText };
  const i = conds.findIndex((x) => x.type === c.type);
  if (i < 0) {
    conds.push(c);
    return;
  }
  // We are updating an existing condition, so we need to check if it has changed.
  if (c.status === conds[i].status) c.lastTransitionTime = conds[i].lastTransitionTime;
  conds[i] = c;
}

/** `BindingREST.Create`: binds pod `name` to `binding.target.name`. */
export function createBinding(store: Store<Pod>, rctx: RequestContext, name: string, input: KubeObject, dryRun = false): Status {
  const binding = input as Binding;
  if (binding.metadata?.name !== name) return newBadRequest('name in URL does not match name in Binding object');
  // TODO (upstream): move me to a binding strategy
  const errs = validatePodBinding(binding.target);
  if (errs.length) return newInvalid({ group: '', kind: 'Binding' }, name, errs);
  const key = store.keyFunc(rctx, name);
  if (typeof key !== 'string') return key;
  const pre: { uid?: string; resourceVersion?: string } = {};
  if (binding.metadata.uid) pre.uid = binding.metadata.uid;
  if (binding.metadata.resourceVersion) pre.resourceVersion = binding.metadata.resourceVersion;
  let plainError: string | undefined;
  const res = store.storage.guaranteedUpdate(
    key,
    false,
    pre.uid !== undefined || pre.resourceVersion !== undefined ? pre : undefined,
    (existing) => {
      const pod = deepClone(existing as Pod);
      if (pod.metadata.deletionTimestamp) {
        plainError = `pod ${pod.metadata.name} is being deleted, cannot be assigned to a host`;
        return newInternalError(plainError);
      }
      if (pod.spec.nodeName) {
        plainError = `pod ${pod.metadata.name} is already assigned to node ${JSON.stringify(pod.spec.nodeName)}`;
        return newInternalError(plainError);
      }
      pod.spec.nodeName = binding.target.name;
      pod.metadata.annotations = { ...pod.metadata.annotations, ...binding.metadata.annotations };
      if (Object.keys(pod.metadata.annotations).length === 0) delete pod.metadata.annotations;
      updatePodCondition(pod, { type: 'PodScheduled', status: 'True', lastProbeTime: null }, rctx.clock.format(rctx.now));
      return pod;
    },
    dryRun,
  );
  if (isStepError(res)) {
    // assignPod: InterpretGetError, then InterpretUpdateError; anything else is a Conflict.
    if (plainError !== undefined) return newConflict(PODS_BINDING, name, plainError);
    if (isStorageError(res) && res.code === ErrCodeKeyNotFound) return newNotFound(PODS, name);
    if (isStorageError(res) && res.code === ErrCodeInvalidObj) return newConflict(PODS, name, storageErrorMessage(res));
    if (isStatus(res)) return res;
    return newConflict(PODS_BINDING, name, JSON.stringify(res));
  }
  return successStatus(201);
}
