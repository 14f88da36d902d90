/**
 * StatefulSet, ControllerRevision and PersistentVolumeClaim registry strategies: kubernetes
 * v1.22 `pkg/registry/apps/statefulset/strategy.go` (status `{replicas: 0}` and generation 1 on
 * create, generation+1 on a spec change, `dropStatefulSetDisabledFields` clearing
 * `minReadySeconds` with the StatefulSetMinReadySeconds gate off, GC policy DeleteDependents),
 * `pkg/registry/apps/controllerrevision/strategy.go` (data and revision immutable) and
 * `pkg/registry/core/persistentvolumeclaim/strategy.go`; validation after
 * `pkg/apis/apps/validation` `ValidateStatefulSet`/`ValidateStatefulSetUpdate`,
 * `ValidateControllerRevision` and `core/validation` `ValidatePersistentVolumeClaim`.
 *
 * Simplification: there is no PersistentVolume controller; a claim is stored already Bound to
 * an instant volume `pvc-<uuid>` (what dynamic provisioning names it), capacity = its request.
 */
import type { ControllerRevision, PersistentVolumeClaim, StatefulSet } from '@podsim/api';
import { field, type FieldError } from '../errors.js';
import { semanticEqual } from '../objects.js';
import { setDefaultsPodSpec } from '../defaults.js';
import { labelSelectorAsSelector, labelsMatch } from '@podsim/api';
import { nameIsDNSSubdomain, validateNonNegative, validateObjectMeta, validateObjectMetaUpdate } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/**
 * apps/v1 `SetDefaults_StatefulSet` (v1.22): podManagementPolicy OrderedReady; updateStrategy
 * RollingUpdate with `rollingUpdate: {partition: 0}` when the type is defaulted (and partition 0
 * whenever rollingUpdate is given without one); replicas 1; revisionHistoryLimit 10; claim
 * templates' volumeMode Filesystem.
 */
export function setDefaultsStatefulSet(ss: StatefulSet): void {
  const spec = ss.spec;
  if (!spec) return;
  spec.podManagementPolicy ??= 'OrderedReady';
  const st = (spec.updateStrategy ??= {});
  if (!st.type) {
    st.type = 'RollingUpdate';
    st.rollingUpdate ??= {};
  }
  if (st.type === 'RollingUpdate' && st.rollingUpdate) st.rollingUpdate.partition ??= 0;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  for (const t of spec.volumeClaimTemplates ?? []) if (t.spec) t.spec.volumeMode ??= 'Filesystem';
  if (spec.template?.spec) setDefaultsPodSpec(spec.template.spec);
}

/** `ValidateStatefulSetSpec` (create). */
export function validateStatefulSet(ss: StatefulSet): FieldError[] {
  const errs = validateObjectMeta(ss.metadata, true, nameIsDNSSubdomain);
  const spec = ss.spec;
  if (!spec) return [...errs, field.required('spec', '')];
  const pmp = spec.podManagementPolicy;
  if (pmp === undefined) errs.push(field.required('spec.podManagementPolicy', ''));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel') errs.push(field.invalid('spec.podManagementPolicy', pmp, 'must be \'OrderedReady\' or \'Parallel\''));
  const st = spec.updateStrategy;
  switch (st?.type) {
    case undefined:
      errs.push(field.required('spec.updateStrategy', ''));
      break;
    case 'OnDelete':
      if (st.rollingUpdate) errs.push(field.invalid('spec.updateStrategy.rollingUpdate', st.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
      break;
    case 'RollingUpdate':
      if (st.rollingUpdate) errs.push(...validateNonNegative(st.rollingUpdate.partition, 'spec.updateStrategy.rollingUpdate.partition'));
      break;
    default:
      errs.push(field.invalid('spec.updateStrategy', st, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  errs.push(...validateNonNegative(spec.replicas, 'spec.replicas'));
  errs.push(...validateNonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateStatefulSetSelectorAndTemplate(spec));
  (spec.volumeClaimTemplates ?? []).forEach((t, i) => {
    if (!t.metadata?.name) errs.push(field.required(`spec.volumeClaimTemplates[${i}].metadata.name`, 'name or generateName is required'));
  });
  return errs;
}

/**
 * The selector and `ValidatePodTemplateSpecForStatefulSet`: the selector must be valid, non-empty
 * and match the template's labels; restartPolicy Always; no activeDeadlineSeconds. The pod spec
 * itself is not validated in 1.22 (upstream leaves it to the pods, because the claim templates'
 * volumes are not in it yet).
 */
function validateStatefulSetSelectorAndTemplate(spec: StatefulSet['spec']): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec.selector) errs.push(field.required('spec.selector', ''));
  else {
    const sel = labelSelectorAsSelector(spec.selector);
    if ('error' in sel) errs.push(field.invalid('spec.selector', spec.selector, sel.error));
    else if (sel.requirements.length === 0) errs.push(field.invalid('spec.selector', spec.selector, 'empty selector is invalid for statefulset'));
    else if (spec.template && !labelsMatch(sel, spec.template.metadata?.labels)) {
      errs.push(field.invalid('spec.template.metadata.labels', spec.template.metadata?.labels ?? {}, '`selector` does not match template `labels`'));
    }
  }
  if (!spec.template) return [...errs, field.required('spec.template', '')];
  const rp = spec.template.spec?.restartPolicy;
  if (rp && rp !== 'Always') errs.push(field.notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (spec.template.spec?.activeDeadlineSeconds !== undefined) {
    errs.push(field.forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  return errs;
}

/** `ValidateStatefulSetUpdate`: only replicas, template, updateStrategy and minReadySeconds may change. */
export function validateStatefulSetUpdate(n: StatefulSet, o: StatefulSet): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  const strip = (s: StatefulSet['spec']) => ({ ...s, replicas: 0, template: undefined, updateStrategy: undefined, minReadySeconds: 0 });
  if (!semanticEqual(strip(n.spec), strip(o.spec))) {
    errs.push(field.forbidden('spec', "updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy' and 'minReadySeconds' are forbidden"));
  }
  errs.push(...validateStatefulSet({ ...n, metadata: { ...n.metadata, generateName: undefined } }).filter((e) => !e.field.startsWith('metadata.')));
  return errs;
}

/** `ValidateStatefulSetStatusUpdate`: counts non-negative. */
export function validateStatefulSetStatusUpdate(n: StatefulSet, o: StatefulSet): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  const st = (n.status ?? {}) as unknown as Record<string, unknown>;
  for (const k of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']) {
    if (typeof st[k] === 'number') errs.push(...validateNonNegative(st[k] as number, `status.${k}`));
  }
  return errs;
}

export const statefulSetStrategy: RESTStrategy<StatefulSet> = {
  namespaceScoped: true,
  groupKind: { group: 'apps', kind: 'StatefulSet' },
  prepareForCreate(ss) {
    ss.status = { replicas: 0 };
    ss.metadata.generation = 1;
    // dropStatefulSetDisabledFields: StatefulSetMinReadySeconds is Alpha (off) in 1.22.
    if (ss.spec) ss.spec.minReadySeconds = 0;
  },
  prepareForUpdate(ss, old) {
    ss.status = old.status;
    if (ss.spec && !(old.spec?.minReadySeconds ?? 0)) ss.spec.minReadySeconds = 0;
    // Any changes to the spec increment the generation number.
    if (!semanticEqual(ss.spec, old.spec)) ss.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validateStatefulSet,
  validateUpdate: validateStatefulSetUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};

export const statefulSetStatusStrategy: RESTStrategy<StatefulSet> = {
  ...statefulSetStrategy,
  prepareForUpdate(ss, old) {
    // status changes are not allowed to update spec
    ss.spec = old.spec;
  },
  validateUpdate: validateStatefulSetStatusUpdate,
};

/** `ValidateControllerRevision`: a name, data present, revision ≥ 0; data and revision immutable. */
function validateControllerRevision(cr: ControllerRevision): FieldError[] {
  const errs = validateObjectMeta(cr.metadata, true, nameIsDNSSubdomain);
  if (cr.data === undefined || cr.data === null) errs.push(field.required('data', 'data is mandatory'));
  errs.push(...validateNonNegative(cr.revision, 'revision'));
  return errs;
}

export const controllerRevisionStrategy: RESTStrategy<ControllerRevision> = {
  namespaceScoped: true,
  groupKind: { group: 'apps', kind: 'ControllerRevision' },
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateControllerRevision,
  validateUpdate(n, o) {
    const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
    errs.push(...validateControllerRevision(n).filter((e) => !e.field.startsWith('metadata.')));
    if (!semanticEqual(n.data, o.data)) errs.push(field.invalid('data', n.data, 'field is immutable'));
    return errs;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};

/** `ValidatePersistentVolumeClaim`: access modes and a storage request are required. */
function validatePersistentVolumeClaim(pvc: PersistentVolumeClaim): FieldError[] {
  const errs = validateObjectMeta(pvc.metadata, true, nameIsDNSSubdomain);
  const spec = pvc.spec;
  if (!spec) return [...errs, field.required('spec', '')];
  if (!spec.accessModes || spec.accessModes.length === 0) errs.push(field.required('spec.accessModes', 'at least 1 access mode is required'));
  const modes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
  for (const m of spec.accessModes ?? []) if (!modes.includes(m)) errs.push(field.notSupported('spec.accessModes', m, modes.slice(0, 3)));
  if (spec.resources?.requests?.storage === undefined) errs.push(field.required('spec.resources[storage]', ''));
  return errs;
}

export const persistentVolumeClaimStrategy: RESTStrategy<PersistentVolumeClaim> = {
  namespaceScoped: true,
  groupKind: { group: '', kind: 'PersistentVolumeClaim' },
  prepareForCreate(pvc, rctx) {
    // No spec: validation refuses it.
    if (!pvc.spec) return;
    // The instant volume (see the module header): what the PV controller would write at once.
    const storage = pvc.spec?.resources?.requests?.storage;
    pvc.spec.volumeName ??= `pvc-${rctx.uuid()}`;
    pvc.spec.volumeMode ??= 'Filesystem';
    pvc.status = { phase: 'Bound', accessModes: [...(pvc.spec.accessModes ?? [])], ...(storage !== undefined ? { capacity: { storage } } : {}) };
  },
  prepareForUpdate(pvc, old) {
    pvc.status = old.status;
  },
  validate: validatePersistentVolumeClaim,
  validateUpdate(n, o) {
    const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
    const strip = (s: PersistentVolumeClaim['spec']) => ({ ...s, resources: undefined });
    if (!semanticEqual(strip(n.spec), strip(o.spec))) errs.push(field.forbidden('spec', 'spec is immutable after creation except resources.requests for bound claims'));
    return errs;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

export const persistentVolumeClaimStatusStrategy: RESTStrategy<PersistentVolumeClaim> = {
  ...persistentVolumeClaimStrategy,
  prepareForUpdate(pvc, old) {
    pvc.spec = old.spec;
  },
  validateUpdate: (n, o) => validateObjectMetaUpdate(n.metadata, o.metadata),
};
