/**
 * PodDisruptionBudget strategies: kubernetes v1.22 `pkg/registry/policy/poddisruptionbudget/
 * strategy.go` (status zeroed and generation 1 on create, generation+1 on any spec change, the
 * policy/v1 GC policy DeleteDependents; the status strategy keeps the stored spec) and the main
 * rules of `pkg/apis/policy/validation` (ValidatePodDisruptionBudget(Spec): minAvailable and
 * maxUnavailable exclusive, each a non-negative int or a percent ≤ 100%, a well-formed label
 * selector; ValidatePodDisruptionBudgetStatusUpdate for policy/v1: counts non-negative).
 * Not validated: the status conditions' own rules (`ValidateConditions`).
 */
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from '@podsim/api';
import { labelSelectorAsSelector, validateLabelKey, validateLabelValue } from '@podsim/api';
import { type FieldError, field } from '../errors.js';
import { semanticEqual } from '../objects.js';
import { isNotMoreThan100Percent, nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate, validatePositiveIntOrPercent } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `ValidatePodDisruptionBudgetSpec` (path `spec`). */
function validateSpec(pdb: PodDisruptionBudget): FieldError[] {
  const spec = pdb.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    errs.push(field.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const [v, path] of [
    [spec.minAvailable, 'spec.minAvailable'],
    [spec.maxUnavailable, 'spec.maxUnavailable'],
  ] as const) errs.push(...validatePositiveIntOrPercent(v, path), ...isNotMoreThan100Percent(v, path));
  // unversionedvalidation.ValidateLabelSelector: label keys and values, operators and their values.
  const sel = spec.selector;
  if (sel) {
    for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
      const kerr = validateLabelKey(k);
      if (kerr) errs.push(field.invalid('spec.selector.matchLabels', k, kerr));
      const verr = validateLabelValue(v);
      if (verr) errs.push(field.invalid(`spec.selector.matchLabels`, v, verr));
    }
    const parsed = labelSelectorAsSelector(sel);
    if ('error' in parsed) errs.push(field.invalid('spec.selector', sel, parsed.error));
  }
  return errs;
}

/** `ValidatePodDisruptionBudget` (create, and update: the spec is mutable in policy/v1). */
export function validatePodDisruptionBudget(pdb: PodDisruptionBudget): FieldError[] {
  return [...validateObjectMeta(pdb.metadata, true, nameIsDNSSubdomain), ...validateSpec(pdb)];
}

function validatePodDisruptionBudgetUpdate(n: PodDisruptionBudget, o: PodDisruptionBudget): FieldError[] {
  return [...validateObjectMetaUpdate(n.metadata, o.metadata), ...validateSpec(n)];
}

/** `ValidatePodDisruptionBudgetStatusUpdate` for policy/v1: the four counts are non-negative. */
export function validatePodDisruptionBudgetStatusUpdate(n: PodDisruptionBudget, o: PodDisruptionBudget): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  const st: Partial<PodDisruptionBudgetStatus> = n.status ?? {};
  for (const k of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'] as const) {
    const v = st[k];
    if (v !== undefined && v < 0) errs.push(field.invalid(`status.${k}`, v, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** The zero `PodDisruptionBudgetStatus` as Go serialises it (the counts are not omitempty). */
export function emptyPodDisruptionBudgetStatus(): PodDisruptionBudgetStatus {
  return { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
}

export const podDisruptionBudgetStrategy: RESTStrategy<PodDisruptionBudget> = {
  namespaceScoped: true,
  groupKind: { group: 'policy', kind: 'PodDisruptionBudget' },
  prepareForCreate(pdb) {
    // create cannot set status
    pdb.status = emptyPodDisruptionBudgetStatus();
    pdb.metadata.generation = 1;
  },
  prepareForUpdate(pdb, old) {
    // Update is not allowed to set status
    pdb.status = old.status;
    // Any changes to the spec increment the generation number.
    if (!semanticEqual(old.spec, pdb.spec)) pdb.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validatePodDisruptionBudget,
  validateUpdate: validatePodDisruptionBudgetUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};

export const podDisruptionBudgetStatusStrategy: RESTStrategy<PodDisruptionBudget> = {
  ...podDisruptionBudgetStrategy,
  prepareForUpdate(pdb, old) {
    // status changes are not allowed to update spec
    pdb.spec = old.spec;
  },
  validateUpdate: validatePodDisruptionBudgetStatusUpdate,
};
