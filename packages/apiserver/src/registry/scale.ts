/**
 * The `/scale` subresource of Deployments and ReplicaSets: kubernetes v1.22
 * `pkg/registry/apps/deployment/storage/storage.go` ScaleREST (`scaleFromDeployment`,
 * `scaleUpdatedObjectInfo.UpdatedObject`) and its ReplicaSet twin. A Scale is autoscaling/v1:
 * spec.replicas from the workload, status.replicas and the selector string from its status.
 */
import type { Deployment, KubeObject, ReplicaSet, Scale, Status } from '@podsim/api';
import { field, isStatus, newBadRequest, newInvalid, newNotFound } from '../errors.js';
import { deepClone } from '../objects.js';
import { labelSelectorAsSelector, labelSelectorString } from '@podsim/api';
import type { Store, UpdatedObjectInfo } from './store.js';
import type { RequestContext } from './strategy.js';

/** `scaleFromDeployment` / `scaleFromReplicaSet`. */
export function scaleFrom(obj: Deployment | ReplicaSet): Scale | Status {
  const sel = labelSelectorAsSelector(obj.spec.selector);
  if ('error' in sel) return newBadRequest(sel.error);
  const m = obj.metadata;
  const metadata: Scale['metadata'] = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { replicas: obj.spec.replicas },
    status: { replicas: obj.status?.replicas ?? 0, selector: labelSelectorString(sel) },
  };
}

/** `ValidateScale`. */
function validateScale(scale: Scale) {
  const errs = [];
  if (!scale.metadata?.name) errs.push(field.required('metadata.name', 'name or generateName is required'));
  if ((scale.spec?.replicas ?? 0) < 0) errs.push(field.invalid('spec.replicas', scale.spec.replicas, 'must be greater than or equal to 0'));
  return errs;
}

/**
 * `ScaleREST.Update`: `toScale(oldScale)` gives the desired Scale; its replicas (and its
 * resourceVersion, as the workload's precondition) are copied into the workload, which the
 * workload store then updates. Returns the new Scale.
 */
export function updateScale(
  store: Store<Deployment | ReplicaSet>,
  rctx: RequestContext,
  name: string,
  toScale: (oldScale: Scale) => KubeObject | Status,
  dryRun = false,
): Scale | Status {
  const resource = `${store.opts.resource.resource}/scale`;
  const info: UpdatedObjectInfo = {
    updatedObject(existing) {
      const w = deepClone(existing as Deployment | ReplicaSet);
      // if zero-value, the existing object does not exist
      if (!w.metadata.resourceVersion) return newNotFound({ group: 'apps', resource }, name);
      const oldScale = scaleFrom(w);
      if (isStatus(oldScale)) return oldScale;
      const obj = toScale(oldScale);
      if (isStatus(obj)) return obj;
      const scale = obj as Scale;
      if (scale.kind !== undefined && scale.kind !== 'Scale') return newBadRequest(`expected input object type to be Scale, but ${scale.kind}`);
      const errs = validateScale(scale);
      if (errs.length) return newInvalid({ group: 'autoscaling', kind: 'Scale' }, w.metadata.name ?? '', errs);
      w.spec.replicas = scale.spec?.replicas;
      if (scale.metadata?.resourceVersion) w.metadata.resourceVersion = scale.metadata.resourceVersion;
      else delete w.metadata.resourceVersion;
      return w;
    },
  };
  const res = store.update(rctx, name, info, dryRun);
  if (isStatus(res)) return res;
  return scaleFrom(res.object as Deployment | ReplicaSet);
}
