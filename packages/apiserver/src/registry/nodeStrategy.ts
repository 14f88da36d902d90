/**
 * Node strategies: kubernetes v1.22 `pkg/registry/core/node/strategy.go` (cluster-scoped; the
 * main resource keeps status, `nodes/status` keeps spec; unconditional updates allowed).
 */
import type { Node } from '@podsim/api';
import { validateGenericUpdate, validateNode } from '../validation.js';
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
  validateUpdate: validateGenericUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

export const nodeStatusStrategy: RESTStrategy<Node> = {
  ...nodeStrategy,
  prepareForUpdate(n, old) {
    if (old.spec !== undefined) n.spec = old.spec;
    else delete n.spec;
  },
};
