/**
 * Node strategies: kubernetes v1.22 `pkg/registry/core/node/strategy.go` (cluster-scoped; the
 * main resource keeps status, `nodes/status` keeps spec; unconditional updates allowed).
 */
import type { Node } from '@podsim/api';
import { validateGenericUpdate, validateNode, validateNodeSpecTaints } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

export const nodeStrategy: RESTStrategy<Node> = {
  namespaceScoped: false,
  groupKind: { group: '', kind: 'Node' },
  prepareForCreate() {},
  prepareForUpdate(n, old) {
    if (old.status !== undefined) n.status = old.status;
    else delete n.status;
  },
  validate: validateNode,
  // nodeStrategy.ValidateUpdate runs ValidateNode (its taints) besides ValidateNodeUpdate.
  validateUpdate: (n, old) => [...validateNodeSpecTaints(n), ...validateGenericUpdate(n, old)],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

export const nodeStatusStrategy: RESTStrategy<Node> = {
  ...nodeStrategy,
  // nodeStatusStrategy.ValidateUpdate: ValidateNodeUpdate only (spec is the old one's anyway).
  validateUpdate: validateGenericUpdate,
  prepareForUpdate(n, old) {
    if (old.spec !== undefined) n.spec = old.spec;
    else delete n.spec;
  },
};
