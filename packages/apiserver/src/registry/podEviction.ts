/**
 * `pods/eviction`: kubernetes v1.22 `pkg/registry/core/pod/storage/eviction.go` EvictionREST.Create
 * (policy/v1 and v1beta1 Eviction bodies), for a cluster without PodDisruptionBudgets — podsim
 * serves none, so every eviction takes upstream's "no PDB matches" path: the pod is deleted through
 * the pod store with the Eviction's deleteOptions (dry run propagated from the query), i.e. the
 * ordinary graceful delete (the pod's own terminationGracePeriodSeconds when the options give no
 * grace). Pods that `canIgnorePDB` (terminal, Pending, already deleting) are deleted with a
 * resourceVersion precondition upstream adds unless the pod is terminal or deleting. Upstream's
 * conflict retry loop is not needed: the GET and the delete run in one request of the synchronous
 * apiserver, so only a client's own precondition can conflict, and upstream does not retry those.
 * Answers Status Success (the create handler's 201).
 */
import type { DeleteOptions, Eviction, Pod, Status } from '@podsim/api';
import { deepEqual } from '@podsim/api';
import { isStatus, newBadRequest, newInternalError, successStatus } from '../errors.js';
import { deepClone } from '../objects.js';
import type { Store } from './store.js';
import type { RequestContext } from './strategy.js';

/** `propagateDryRun`: the query's dryRun goes into the options; both set and different is an error. */
function propagateDryRun(eviction: Eviction, dryRun: boolean): DeleteOptions | Status {
  const query = dryRun ? ['All'] : [];
  const options: DeleteOptions = eviction.deleteOptions ? deepClone(eviction.deleteOptions) : {};
  if (!options.dryRun || options.dryRun.length === 0) {
    if (query.length > 0) options.dryRun = query;
    return options;
  }
  if (query.length === 0 || deepEqual(query, options.dryRun)) return options;
  return newInternalError(`Non-matching dry-run options in request and content: [${query.join(' ')}] and [${options.dryRun.join(' ')}]`);
}

/** `canIgnorePDB`: terminal, Pending and already-deleting pods are deleted without a PDB check. */
export function canIgnorePDB(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp);
}

/** `shouldEnforceResourceVersion`: not for terminal or deleting pods. */
function shouldEnforceResourceVersion(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
}

function resourceVersionIsUnset(options: DeleteOptions): boolean {
  return options.preconditions?.resourceVersion === undefined;
}

/**
 * `EvictionREST.Create`: evicts pod `name` (rctx's namespace). `eviction` is the decoded body;
 * `dryRun` the query's `dryRun=All`. Returns the Status to answer (201 Success, or the failure:
 * 400 name mismatch, 404 no such pod, 409 a precondition that does not hold, 422 bad options).
 */
export function createEviction(store: Store<Pod>, rctx: RequestContext, name: string, eviction: Eviction, dryRun = false): Status {
  if (name !== eviction.metadata?.name) return newBadRequest('name in URL does not match name in Eviction object');
  const original = propagateDryRun(eviction, dryRun);
  if (isStatus(original)) return original;
  const got = store.get(rctx, name);
  if (isStatus(got)) return got;
  const pod = got as Pod;
  let options = original;
  // With no PodDisruptionBudget the pod is deleted either way; what differs is the precondition.
  if (canIgnorePDB(pod) && shouldEnforceResourceVersion(pod) && resourceVersionIsUnset(original)) {
    // Make sure we are not racing with another PDB-impacting process (upstream's comment).
    options = { ...original, preconditions: { ...original.preconditions, resourceVersion: pod.metadata.resourceVersion } };
  }
  const res = store.delete(rctx, name, options);
  if (isStatus(res)) return res;
  return successStatus(201);
}
