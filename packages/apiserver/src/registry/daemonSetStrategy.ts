/**
 * DaemonSet strategies: kubernetes v1.22 `pkg/registry/apps/daemonset/strategy.go`
 * (daemonSetStrategy: status cleared and generation 1 on create, the
 * `deprecated.daemonset.template.generation` annotation set to the generation; generation+1 on
 * spec change with the annotation following when the template changed; selector immutable; GC
 * policy DeleteDependents; daemonSetStatusStrategy: spec from the stored object) and
 * `SetDefaults_DaemonSet` (RollingUpdate, maxUnavailable 1, maxSurge 0, history 10). Validation is
 * `ValidateDaemonSet` reduced to what the controller reads.
 */
import type { DaemonSet, DaemonSetSpec } from '@podsim/api';
import { labelSelectorAsSelector, labelsMatch } from '@podsim/api';
import { setDefaultsPodSpec } from '../defaults.js';
import { type FieldError, field } from '../errors.js';
import { semanticEqual } from '../objects.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate, validatePodSpec, validatePositiveIntOrPercent } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `extensions.DaemonSetTemplateGenerationKey`. */
export const DAEMONSET_TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** `SetDefaults_DaemonSet`. */
export function setDefaultsDaemonSet(ds: DaemonSet): void {
  const s = ds.spec;
  if (!s) return;
  const st = (s.updateStrategy ??= {});
  st.type ??= 'RollingUpdate';
  if (st.type === 'RollingUpdate') {
    const ru = (st.rollingUpdate ??= {});
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  s.revisionHistoryLimit ??= 10;
  if (s.template?.spec) setDefaultsPodSpec(s.template.spec);
}

function validateSpec(s: DaemonSetSpec | undefined): FieldError[] {
  if (!s) return [field.required('spec', '')];
  const errs: FieldError[] = [];
  if (!s.selector) errs.push(field.required('spec.selector', ''));
  else {
    const sel = labelSelectorAsSelector(s.selector);
    if ('error' in sel) errs.push(field.invalid('spec.selector', s.selector, sel.error));
    else if (sel.requirements.length === 0) errs.push(field.invalid('spec.selector', s.selector, 'empty selector is invalid for daemonset'));
    else if (!labelsMatch(sel, s.template?.metadata?.labels)) {
      errs.push(field.invalid('spec.template.metadata.labels', s.template?.metadata?.labels ?? {}, '`selector` does not match template `labels`'));
    }
  }
  if (!s.template) return [...errs, field.required('spec.template', '')];
  errs.push(...validatePodSpec(s.template.spec, 'spec.template.spec'));
  if (s.template.spec?.restartPolicy && s.template.spec.restartPolicy !== 'Always') {
    errs.push(field.notSupported('spec.template.spec.restartPolicy', s.template.spec.restartPolicy, ['Always']));
  }
  if (s.minReadySeconds !== undefined && s.minReadySeconds < 0) errs.push(field.invalid('spec.minReadySeconds', s.minReadySeconds, 'must be greater than or equal to 0'));
  const st = s.updateStrategy;
  if (st?.type !== undefined && st.type !== 'RollingUpdate' && st.type !== 'OnDelete') errs.push(field.notSupported('spec.updateStrategy.type', st.type, ['OnDelete', 'RollingUpdate']));
  const ru = st?.rollingUpdate;
  if (st?.type === 'RollingUpdate' && ru) {
    errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable'));
    errs.push(...validatePositiveIntOrPercent(ru.maxSurge, 'spec.updateStrategy.rollingUpdate.maxSurge'));
    const zero = (v: number | string | undefined) => v === undefined || v === 0 || v === '0%';
    if (zero(ru.maxUnavailable) && zero(ru.maxSurge)) {
      errs.push(field.invalid('spec.updateStrategy.rollingUpdate.maxUnavailable', ru.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
    }
  }
  return errs;
}

export function validateDaemonSet(ds: DaemonSet): FieldError[] {
  return [...validateObjectMeta(ds.metadata, true, nameIsDNSSubdomain), ...validateSpec(ds.spec)];
}

export function validateDaemonSetUpdate(n: DaemonSet, o: DaemonSet): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  errs.push(...validateSpec(n.spec));
  if (!semanticEqual(n.spec?.selector, o.spec?.selector)) errs.push(field.invalid('spec.selector', n.spec?.selector, 'field is immutable'));
  return errs;
}

export const daemonSetStrategy: RESTStrategy<DaemonSet> = {
  namespaceScoped: true,
  groupKind: { group: 'apps', kind: 'DaemonSet' },
  prepareForCreate(ds) {
    ds.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    ds.metadata.generation = 1;
    ds.metadata.annotations = { ...(ds.metadata.annotations ?? {}), [DAEMONSET_TEMPLATE_GENERATION_ANNOTATION]: '1' };
  },
  prepareForUpdate(ds, old) {
    ds.status = old.status;
    if (!semanticEqual(ds.spec, old.spec)) {
      const gen = (old.metadata.generation ?? 0) + 1;
      ds.metadata.generation = gen;
      if (!semanticEqual(ds.spec?.template, old.spec?.template)) {
        ds.metadata.annotations = { ...(ds.metadata.annotations ?? {}), [DAEMONSET_TEMPLATE_GENERATION_ANNOTATION]: String(gen) };
      }
    }
  },
  validate: validateDaemonSet,
  validateUpdate: validateDaemonSetUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};

export const daemonSetStatusStrategy: RESTStrategy<DaemonSet> = {
  ...daemonSetStrategy,
  prepareForUpdate(ds, old) {
    ds.spec = old.spec;
  },
  validateUpdate(n, o) {
    return validateObjectMetaUpdate(n.metadata, o.metadata);
  },
};
