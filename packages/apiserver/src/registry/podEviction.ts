/**
 * `pods/eviction`: kubernetes v1.22 `pkg/registry/core/pod/storage/eviction.go` EvictionREST.Create
 * (policy/v1 and v1beta1 Eviction bodies). Pods that `canIgnorePDB` (terminal, Pending, already
 * deleting) are deleted directly, with the resourceVersion precondition upstream adds unless the
 * pod is terminal or deleting. Otherwise the PodDisruptionBudgets of the pod's namespace whose
 * selector matches it decide (`getPodDisruptionBudgets`; an empty or nil selector matches
 * nothing): none → delete; more than one → a 500 Status; one → an unready pod of a satisfied
 * budget is deleted with a resourceVersion precondition, else `checkAndDecrement`: 429
 * TooManyRequests with a DisruptionBudget cause while the controller has not observed the
 * budget's generation or no disruption is allowed, else disruptionsAllowed − 1 and the pod in
 * status.disruptedPods (a status write carrying the read resourceVersion), then the delete with
 * the Eviction's deleteOptions (dry run propagated from the query). Upstream's conflict retry
 * loops are not needed: the reads and writes run in one request of the synchronous apiserver,
 * so only a client's own precondition can conflict, and upstream does not retry those.
 * Answers Status Success (the create handler's 201).
 */
import type { DeleteOptions, Eviction, Pod, PodDisruptionBudget, PodDisruptionBudgetStatus, Status } from '@podsim/api';
import { DISRUPTION_BUDGET_CAUSE, EVERYTHING, deepEqual, labelSelectorAsSelector, labelsMatch, selectorEmpty, updateDisruptionAllowedCondition } from '@podsim/api';
import { isStatus, newBadRequest, newForbidden, newInternalError, newTooManyRequests, successStatus } from '../errors.js';
import { ALL_FIELDS } from '../selectors/fields.js';
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

/** `MaxDisruptedPodSize`: more unconfirmed evictions than this and the budget refuses (403). */
export const MAX_DISRUPTED_POD_SIZE = 2000;

const EVICTION_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget.";

/** `createTooManyRequestsError`: the budget's status is behind its spec (or a raced delete). */
function createTooManyRequestsError(name: string): Status {
  const st = newTooManyRequests(EVICTION_REFUSED, 10);
  st.details = { ...st.details, causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: `The disruption budget ${name} is still being processed by the server.` }] };
  return st;
}

/** `podutil.IsPodReady`: condition Ready is True. */
function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** `getPodDisruptionBudgets`: the budgets of the pod's namespace whose (non-empty, valid) selector matches it. */
function getPodDisruptionBudgets(pdbs: Store<PodDisruptionBudget>, pod: Pod): PodDisruptionBudget[] {
  const all = pdbs.list(pod.metadata.namespace, EVERYTHING, ALL_FIELDS).items as PodDisruptionBudget[];
  return all.filter((pdb) => {
    const sel = labelSelectorAsSelector(pdb.spec?.selector);
    // If a PDB with a nil or empty selector creeps in, it should match nothing, not everything.
    if ('error' in sel || sel.nothing || selectorEmpty(sel)) return false;
    return labelsMatch(sel, pod.metadata.labels);
  });
}

/**
 * `checkAndDecrement`: refuses (429 / 403) or takes one disruption from `pdb` and records `podName`
 * in its disruptedPods at `rctx.now` (not written on a dry run). Returns the failure, if any.
 */
function checkAndDecrement(pdbs: Store<PodDisruptionBudget>, rctx: RequestContext, podName: string, pdb: PodDisruptionBudget, dryRun: boolean): Status | undefined {
  const name = pdb.metadata.name ?? '';
  const status = pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) return createTooManyRequestsError(name);
  const gr = { group: 'policy', resource: 'poddisruptionbudget' };
  if (status.disruptionsAllowed < 0) return newForbidden(gr, name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
    return newForbidden(gr, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (status.disruptionsAllowed === 0) {
    const st = newTooManyRequests(EVICTION_REFUSED, 0);
    st.details = {
      ...st.details,
      causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: `The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently` }],
    };
    return st;
  }
  const now = rctx.clock.format(rctx.now);
  const next: PodDisruptionBudgetStatus = { ...status, disruptionsAllowed: status.disruptionsAllowed - 1 };
  if (next.disruptionsAllowed === 0) updateDisruptionAllowedCondition(next, now);
  // If this is a dry-run, we don't need to go any further than that.
  if (dryRun) return undefined;
  // Tell the disruption controller the pod is about to go, so that it does not count it as
  // healthy; if it is not deleted within DeletionTimeout the controller drops the entry.
  next.disruptedPods = { ...status.disruptedPods, [podName]: now };
  const updated: PodDisruptionBudget = { ...pdb, status: next };
  const res = pdbs.update(rctx, name, { updatedObject: () => deepClone(updated) });
  return isStatus(res) ? res : undefined;
}

/**
 * `EvictionREST.Create`: evicts pod `name` (rctx's namespace). `eviction` is the decoded body;
 * `dryRun` the query's `dryRun=All`; `pdbs` the PodDisruptionBudget status store. Returns the
 * Status to answer (201 Success, or the failure: 400 name mismatch, 404 no such pod, 409 a
 * precondition that does not hold, 422 bad options, 429 the budget refuses, 500 several budgets).
 */
export function createEviction(store: Store<Pod>, pdbs: Store<PodDisruptionBudget>, rctx: RequestContext, name: string, eviction: Eviction, dryRun = false): Status {
  if (name !== eviction.metadata?.name) return newBadRequest('name in URL does not match name in Eviction object');
  const original = propagateDryRun(eviction, dryRun);
  if (isStatus(original)) return original;
  const got = store.get(rctx, name);
  if (isStatus(got)) return got;
  const pod = got as Pod;
  if (canIgnorePDB(pod)) {
    let options = original;
    if (shouldEnforceResourceVersion(pod) && resourceVersionIsUnset(original)) {
      // Make sure we are not racing with another PDB-impacting process (upstream's comment).
      options = withResourceVersion(original, pod);
    }
    const res = store.delete(rctx, name, options);
    return isStatus(res) ? res : successStatus(201);
  }
  const matching = getPodDisruptionBudgets(pdbs, pod);
  if (matching.length > 1) {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 };
  }
  let updateDeletionOptions = false;
  let pdbName = '';
  if (matching.length === 1) {
    const pdb = matching[0];
    pdbName = pdb.metadata.name ?? '';
    const st = pdb.status;
    // If the pod is not ready, it doesn't count towards healthy and we should not decrement.
    if (!isPodReady(pod) && st && st.currentHealthy >= st.desiredHealthy && st.desiredHealthy > 0) {
      updateDeletionOptions = true;
    } else {
      const refused = checkAndDecrement(pdbs, rctx, pod.metadata.name ?? name, pdb, (original.dryRun ?? []).length > 0);
      if (refused) return refused;
    }
  }
  // With updateDeletionOptions the precondition makes sure the pod has not become ready since.
  const options = updateDeletionOptions ? withResourceVersion(original, pod) : original;
  const res = store.delete(rctx, name, options);
  if (isStatus(res)) {
    if (res.reason === 'Conflict' && updateDeletionOptions && resourceVersionIsUnset(original)) return createTooManyRequestsError(pdbName);
    return res;
  }
  return successStatus(201);
}

function withResourceVersion(options: DeleteOptions, pod: Pod): DeleteOptions {
  return { ...options, preconditions: { ...options.preconditions, resourceVersion: pod.metadata.resourceVersion } };
}
