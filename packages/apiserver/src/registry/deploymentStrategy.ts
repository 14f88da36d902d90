/**
 * Deployment strategies: kubernetes v1.22 `pkg/registry/apps/deployment/strategy.go`
 * (deploymentStrategy: status `{}` and generation 1 on create; generation+1 when the spec or
 * the annotations change; selector immutable in apps/v1; GC policy DeleteDependents;
 * deploymentStatusStrategy: spec and labels come from the stored object).
 */
import type { Deployment } from '@podsim/api';
import { semanticEqual } from '../objects.js';
import { validateDeployment, validateDeploymentUpdate, validateWorkloadStatusUpdate } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

export const deploymentStrategy: RESTStrategy<Deployment> = {
  namespaceScoped: true,
  groupKind: { group: 'apps', kind: 'Deployment' },
  prepareForCreate(d) {
    d.status = {};
    d.metadata.generation = 1;
  },
  prepareForUpdate(d, old) {
    d.status = old.status;
    // Spec updates bump the generation so that we can distinguish between scaling events and
    // template changes, annotation updates bump the generation because annotations are copied
    // from deployments to their replica sets.
    if (!semanticEqual(d.spec, old.spec) || !semanticEqual(d.metadata.annotations, old.metadata.annotations)) {
      d.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
  },
  validate: validateDeployment,
  validateUpdate: validateDeploymentUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};

export const deploymentStatusStrategy: RESTStrategy<Deployment> = {
  ...deploymentStrategy,
  prepareForUpdate(d, old) {
    // update is not allowed to set spec
    d.spec = old.spec;
    if (old.metadata.labels) d.metadata.labels = old.metadata.labels;
    else delete d.metadata.labels;
  },
  validateUpdate: validateWorkloadStatusUpdate,
};
