/**
 * Namespace strategy: kubernetes v1.22 `pkg/registry/core/namespace/strategy.go` (phase Active
 * and the `kubernetes` spec finalizer on create, the `kubernetes.io/metadata.name` label in
 * Canonicalize). Simplification: namespace deletion is a plain immediate delete — there is no
 * namespace controller to empty it (objects inside stay until deleted).
 */
import type { Namespace } from '@podsim/api';
import { validateGenericUpdate, validateNamespace } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `v1.LabelMetadataName`. */
export const LABEL_METADATA_NAME = 'kubernetes.io/metadata.name';

export const namespaceStrategy: RESTStrategy<Namespace> = {
  namespaceScoped: false,
  groupKind: { group: '', kind: 'Namespace' },
  prepareForCreate(ns) {
    // on create, status is active
    ns.status = { phase: 'Active' };
    // on create, we require the kubernetes value
    const fin = ns.spec?.finalizers ?? [];
    if (!fin.includes('kubernetes')) ns.spec = { ...ns.spec, finalizers: [...fin, 'kubernetes'] };
  },
  prepareForUpdate(ns, old) {
    ns.spec = old.spec;
    ns.status = old.status;
  },
  validate: validateNamespace,
  validateUpdate: validateGenericUpdate,
  canonicalize(ns) {
    // Ensure the label matches the name for namespaces just created using GenerateName.
    ns.metadata.labels = { ...ns.metadata.labels, [LABEL_METADATA_NAME]: ns.metadata.name ?? '' };
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
