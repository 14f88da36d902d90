/**
 * ReplicaSet strategies: kubernetes v1.22 `pkg/registry/apps/replicaset/strategy.go`
 * (rsStrategy: status cleared and generation 1 on create, generation+1 on any spec change,
 * apps/v1 GC policy DeleteDependents; rsStatusStrategy: spec comes from the stored object).
 */
import type { ReplicaSet } from '@podsim/api';
import { semanticEqual } from '../objects.js';
import { validateReplicaSet, validateReplicaSetUpdate, validateWorkloadStatusUpdate } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

export const replicaSetStrategy: RESTStrategy<ReplicaSet> = {
  namespaceScoped: true,
  groupKind: { group: 'apps', kind: 'ReplicaSet' },
  prepareForCreate(rs) {
    rs.status = { replicas: 0 };
    rs.metadata.generation = 1;
  },
  prepareForUpdate(rs, old) {
    // update is not allowed to set status
    rs.status = old.status;
    // Any changes to the spec increment the generation number.
    if (!semanticEqual(old.spec, rs.spec)) rs.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validateReplicaSet,
  validateUpdate: validateReplicaSetUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};

export const replicaSetStatusStrategy: RESTStrategy<ReplicaSet> = {
  ...replicaSetStrategy,
  prepareForUpdate(rs, old) {
    // update is not allowed to set spec
    rs.spec = old.spec;
  },
  validateUpdate: validateWorkloadStatusUpdate,
};
