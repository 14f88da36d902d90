/**
 * Job strategies: kubernetes v1.22 `pkg/registry/batch/job/strategy.go` (jobStrategy: status
 * cleared and generation 1 on create, generation+1 on spec change, `generateSelector` in
 * Validate — `controller-uid=<uid>` and `job-name=<name>` on the template and `controller-uid`
 * as the selector unless `manualSelector` —, batch/v1 GC policy **OrphanDependents** (kept for
 * backwards compatibility; spec WC §1.4); jobStatusStrategy: spec from the stored object) and
 * `SetDefaults_Job` (`pkg/apis/batch/v1/defaults.go`). Validation is `ValidateJob` reduced to
 * what podsim's controllers read: counts non-negative, restartPolicy Never/OnFailure, selector
 * matches the template, spec immutable apart from parallelism, ADS, suspend and TTL.
 */
import type { Job, JobSpec } from '@podsim/api';
import { labelSelectorAsSelector, labelsMatch } from '@podsim/api';
import { setDefaultsPodSpec } from '../defaults.js';
import { type FieldError, field } from '../errors.js';
import { semanticEqual } from '../objects.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate, validatePodSpec } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

/** `SetDefaults_Job`: completions = parallelism = 1 when both unset, else parallelism 1; backoffLimit 6; NonIndexed; suspend false. */
export function setDefaultsJob(job: Job): void {
  const s = job.spec;
  if (!s) return;
  if (s.completions === undefined && s.parallelism === undefined) {
    s.completions = 1;
    s.parallelism = 1;
  }
  s.parallelism ??= 1;
  s.backoffLimit ??= 6;
  s.completionMode ??= 'NonIndexed';
  s.suspend ??= false;
  if (s.template?.spec) setDefaultsPodSpec(s.template.spec);
}

/** `generateSelector`: the apiserver labels the template with the Job's UID and name and selects on the UID. */
function generateSelector(job: Job): void {
  const s = job.spec;
  if (!s || s.manualSelector === true) return;
  const uid = job.metadata.uid ?? '';
  s.template ??= { spec: { containers: [] } };
  const md = (s.template.metadata ??= {});
  md.labels = { ...(md.labels ?? {}) };
  md.labels['controller-uid'] ??= uid;
  md.labels['job-name'] ??= job.metadata.name ?? '';
  if (!s.selector) s.selector = { matchLabels: { 'controller-uid': uid } };
  else if (!s.selector.matchLabels?.['controller-uid']) s.selector = { ...s.selector, matchLabels: { ...(s.selector.matchLabels ?? {}), 'controller-uid': uid } };
}

function nonNegative(v: number | undefined, path: string): FieldError[] {
  return v !== undefined && v < 0 ? [field.invalid(path, v, 'must be greater than or equal to 0')] : [];
}

function validateJobSpec(s: JobSpec | undefined): FieldError[] {
  if (!s) return [field.required('spec', '')];
  const errs: FieldError[] = [];
  errs.push(...nonNegative(s.parallelism, 'spec.parallelism'));
  errs.push(...nonNegative(s.completions, 'spec.completions'));
  errs.push(...nonNegative(s.backoffLimit, 'spec.backoffLimit'));
  errs.push(...nonNegative(s.ttlSecondsAfterFinished, 'spec.ttlSecondsAfterFinished'));
  if (s.activeDeadlineSeconds !== undefined && s.activeDeadlineSeconds <= 0) errs.push(field.invalid('spec.activeDeadlineSeconds', s.activeDeadlineSeconds, 'must be greater than 0'));
  if (s.completionMode !== undefined && s.completionMode !== 'NonIndexed' && s.completionMode !== 'Indexed') {
    errs.push(field.notSupported('spec.completionMode', s.completionMode, ['NonIndexed', 'Indexed']));
  }
  if (s.completionMode === 'Indexed' && s.completions === undefined) errs.push(field.required('spec.completions', 'when completion mode is Indexed'));
  if (!s.selector) errs.push(field.required('spec.selector', ''));
  else {
    const sel = labelSelectorAsSelector(s.selector);
    if ('error' in sel) errs.push(field.invalid('spec.selector', s.selector, sel.error));
    else if (!labelsMatch(sel, s.template?.metadata?.labels)) {
      errs.push(field.invalid('spec.template.metadata.labels', s.template?.metadata?.labels ?? {}, '`selector` does not match template `labels`'));
    }
  }
  if (!s.template) return [...errs, field.required('spec.template', '')];
  errs.push(...validatePodSpec(s.template.spec, 'spec.template.spec'));
  const rp = s.template.spec?.restartPolicy;
  if (rp !== 'OnFailure' && rp !== 'Never') errs.push(field.notSupported('spec.template.spec.restartPolicy', rp ?? '', ['OnFailure', 'Never']));
  return errs;
}

export function validateJob(job: Job): FieldError[] {
  generateSelector(job);
  return [...validateObjectMeta(job.metadata, true, nameIsDNSSubdomain), ...validateJobSpec(job.spec)];
}

/** `ValidateJobUpdate`: the template, selector, completions and completion mode are immutable. */
export function validateJobUpdate(n: Job, o: Job): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  errs.push(...validateJobSpec(n.spec));
  for (const k of ['template', 'selector', 'completions', 'completionMode', 'manualSelector'] as const) {
    if (!semanticEqual(n.spec?.[k], o.spec?.[k])) errs.push(field.invalid(`spec.${k}`, n.spec?.[k], 'field is immutable'));
  }
  return errs;
}

export const jobStrategy: RESTStrategy<Job> = {
  namespaceScoped: true,
  groupKind: { group: 'batch', kind: 'Job' },
  prepareForCreate(job) {
    job.status = {};
    job.metadata.generation = 1;
  },
  prepareForUpdate(job, old) {
    job.status = old.status;
    if (!semanticEqual(job.spec, old.spec)) job.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validateJob,
  validateUpdate: validateJobUpdate,
  canonicalize(job) {
    // SetDefaults_Job copies the template labels to a Job without labels; upstream applies it
    // again when the stored object is decoded, by then with generateSelector's labels, so a
    // Job reads back labelled controller-uid / job-name.
    const labels = job.spec?.template?.metadata?.labels;
    if (labels && Object.keys(job.metadata.labels ?? {}).length === 0) job.metadata.labels = { ...labels };
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  // batch/v1 keeps OrphanDependents for backwards compatibility (strategy.go DefaultGarbageCollectionPolicy).
  defaultGarbageCollectionPolicy: () => 'OrphanDependents',
};

export const jobStatusStrategy: RESTStrategy<Job> = {
  ...jobStrategy,
  prepareForUpdate(job, old) {
    job.spec = old.spec;
  },
  validateUpdate(n, o) {
    const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
    const st = n.status ?? {};
    errs.push(...nonNegative(st.active, 'status.active'), ...nonNegative(st.succeeded, 'status.succeeded'), ...nonNegative(st.failed, 'status.failed'));
    return errs;
  },
};
