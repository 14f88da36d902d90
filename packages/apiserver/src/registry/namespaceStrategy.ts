/**
 * Namespace strategies: kubernetes v1.22 `pkg/registry/core/namespace/strategy.go` —
 * `namespaceStrategy` (phase Active and the `kubernetes` spec finalizer on create; an update keeps
 * spec.finalizers and status; the `kubernetes.io/metadata.name` label in Canonicalize),
 * `namespaceStatusStrategy` (`namespaces/{name}/status`: only status changes) and
 * `namespaceFinalizeStrategy` (`namespaces/{name}/finalize`: only spec.finalizers changes).
 * Deletion (Terminating, then removal once finalized) is `namespaceRest.ts`.
 */
import type { Namespace } from '@podsim/api';
import { validateGenericUpdate, validateNamespace, validateNamespaceFinalizeUpdate, validateNamespaceStatusUpdate } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `v1.LabelMetadataName`. */
export const LABEL_METADATA_NAME = 'kubernetes.io/metadata.name';
/** `v1.FinalizerKubernetes`: the spec finalizer the namespace controller removes when the namespace is empty. */
export const FINALIZER_KUBERNETES = 'kubernetes';

export const namespaceStrategy: RESTStrategy<Namespace> = {
  namespaceScoped: false,
  groupKind: { group: '', kind: 'Namespace' },
  prepareForCreate(ns) {
    // on create, status is active
    ns.status = { phase: 'Active' };
    // on create, we require the kubernetes value
    const fin = ns.spec?.finalizers ?? [];
    if (!fin.includes(FINALIZER_KUBERNETES)) ns.spec = { ...ns.spec, finalizers: [...fin, FINALIZER_KUBERNETES] };
  },
  prepareForUpdate(ns, old) {
    // spec.finalizers is all of NamespaceSpec: the finalize subresource alone changes it.
    ns.spec = old.spec;
    ns.status = old.status;
  },
  validate: validateNamespace,
  validateUpdate: (n, o) => [...validateNamespace(n), ...validateGenericUpdate(n, o)],
  canonicalize(ns) {
    // Ensure the label matches the name for namespaces just created using GenerateName.
    ns.metadata.labels = { ...ns.metadata.labels, [LABEL_METADATA_NAME]: ns.metadata.name ?? '' };
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** `namespaceStatusStrategy`: `namespaces/{name}/status` keeps the stored spec. */
export const namespaceStatusStrategy: RESTStrategy<Namespace> = {
  ...namespaceStrategy,
  prepareForUpdate(ns, old) {
    ns.spec = old.spec;
  },
  validateUpdate: validateNamespaceStatusUpdate,
};

/** `namespaceFinalizeStrategy`: `namespaces/{name}/finalize` keeps the stored status. */
export const namespaceFinalizeStrategy: RESTStrategy<Namespace> = {
  ...namespaceStrategy,
  prepareForUpdate(ns, old) {
    ns.status = old.status;
  },
  validateUpdate: validateNamespaceFinalizeUpdate,
};
