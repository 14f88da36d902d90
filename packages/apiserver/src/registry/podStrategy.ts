/**
 * Pod strategies: kubernetes v1.22 `pkg/registry/core/pod/strategy.go` (podStrategy:
 * PrepareForCreate → phase Pending + qosClass, PrepareForUpdate keeps status, ValidatePodCreate
 * / ValidatePodUpdate, AllowUnconditionalUpdate, **CheckGracefulDelete**; podStatusStrategy:
 * spec, deletionTimestamp and ownerReferences come from the stored pod) and `pkg/apis/core/
 * helper/qos` GetPodQOS (cpu/memory only).
 */
import type { DeleteOptions, Pod } from '@podsim/api';
import { validatePodCreate, validatePodStatusUpdate, validatePodUpdate } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `qos.GetPodQOS`, restricted to cpu and memory. */
export function getPodQOS(pod: Pod): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let anySet = false;
  let guaranteed = all.length > 0;
  for (const c of all) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      if (req[r] !== undefined || lim[r] !== undefined) anySet = true;
      if (lim[r] === undefined || (req[r] ?? lim[r]) !== lim[r]) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** `podStrategy`. */
export const podStrategy: RESTStrategy<Pod> = {
  namespaceScoped: true,
  groupKind: { group: '', kind: 'Pod' },
  prepareForCreate(pod) {
    pod.status = { phase: 'Pending', qosClass: getPodQOS(pod) };
  },
  prepareForUpdate(pod, old) {
    if (old.status !== undefined) pod.status = old.status;
    else delete pod.status;
  },
  validate: validatePodCreate,
  validateUpdate: validatePodUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  /**
   * `CheckGracefulDelete`: grace = the client's value, else spec.terminationGracePeriodSeconds
   * (else 0); 0 if the pod is unscheduled or already Succeeded/Failed; negative → 1. Always true,
   * so pods always take the graceful path (grace 0 then deletes in the same request).
   */
  checkGracefulDelete(pod: Pod, options: DeleteOptions): boolean {
    let period = 0;
    // user has specified a value
    if (options.gracePeriodSeconds !== undefined) {
      period = options.gracePeriodSeconds;
    } else if (pod.spec?.terminationGracePeriodSeconds !== undefined) {
      // use the default value if set, or deletes the pod immediately (0)
      period = pod.spec.terminationGracePeriodSeconds;
    }
    // if the pod is not scheduled, delete immediately
    if (!pod.spec?.nodeName) period = 0;
    // if the pod is already terminated, delete immediately
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') period = 0;
    if (period < 0) period = 1;
    // ensure the options and the pod are in sync
    options.gracePeriodSeconds = period;
    return true;
  },
};

/** `podStatusStrategy`: the `pods/status` subresource only changes status (and metadata). */
export const podStatusStrategy: RESTStrategy<Pod> = {
  ...podStrategy,
  prepareForUpdate(pod, old) {
    pod.spec = old.spec;
    delete pod.metadata.deletionTimestamp;
    // don't allow the pods/status endpoint to touch owner references since old kubelets corrupt
    // them in a way that breaks garbage collection
    if (old.metadata.ownerReferences) pod.metadata.ownerReferences = old.metadata.ownerReferences;
    else delete pod.metadata.ownerReferences;
  },
  validateUpdate: validatePodStatusUpdate,
  specFromStored: true,
};
