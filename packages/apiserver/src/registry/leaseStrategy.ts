/**
 * coordination.k8s.io/v1 Lease strategy: kubernetes v1.22 `pkg/registry/coordination/lease/
 * strategy.go` (namespaced, no status subresource, unconditional updates allowed, no
 * create-on-update) and `ValidateLease` (`pkg/apis/coordination/validation`: a DNS-subdomain
 * name; `leaseDurationSeconds` and `leaseTransitions` not negative — the duration must be > 0).
 */
import type { Lease } from '@podsim/api';
import { field, type FieldError } from '../errors.js';
import { nameIsDNSSubdomain, validateGenericUpdate, validateObjectMeta } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `ValidateLease` / `ValidateLeaseSpec`. */
export function validateLease(l: Lease): FieldError[] {
  const errs = validateObjectMeta(l.metadata, true, nameIsDNSSubdomain);
  const d = l.spec?.leaseDurationSeconds;
  if (d !== undefined && d <= 0) errs.push(field.invalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
  const tr = l.spec?.leaseTransitions;
  if (tr !== undefined && tr < 0) errs.push(field.invalid('spec.leaseTransitions', tr, 'must be greater than or equal to 0'));
  return errs;
}

export const leaseStrategy: RESTStrategy<Lease> = {
  namespaceScoped: true,
  groupKind: { group: 'coordination.k8s.io', kind: 'Lease' },
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateLease,
  validateUpdate: (n, o) => [...validateGenericUpdate(n, o), ...validateLease(n)],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
