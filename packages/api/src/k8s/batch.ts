/**
 * batch/v1 Job (k8s.io/api `batch/v1/types.go`, v0.22.8) with the 1.22 Beta fields IndexedJob
 * (`completionMode`), SuspendJob (`suspend`) and TTLAfterFinished (`ttlSecondsAfterFinished`).
 * `status.uncountedTerminatedPods` (JobTrackingWithFinalizers, alpha off in 1.22) is not modelled.
 */
import type { KubeObject, LabelSelector } from './meta.js';
import type { PodTemplateSpec } from './apps.js';

/** `batch.kubernetes.io/job-completion-index`: the annotation an Indexed Job's pods carry. */
export const JOB_COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';
/** `JOB_COMPLETION_INDEX`: the env var the controller adds from that annotation (downward API). */
export const JOB_COMPLETION_INDEX_ENV_NAME = 'JOB_COMPLETION_INDEX';

export type CompletionMode = 'NonIndexed' | 'Indexed';

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  /** Seconds from `status.startTime` after which the job fails `DeadlineExceeded`. */
  activeDeadlineSeconds?: number;
  /** Default 6. */
  backoffLimit?: number;
  selector?: LabelSelector;
  manualSelector?: boolean;
  template: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: CompletionMode;
  suspend?: boolean;
}

export type JobConditionType = 'Suspended' | 'Complete' | 'Failed';

export interface JobCondition {
  type: JobConditionType;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface JobStatus {
  conditions?: JobCondition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  /** Indexed jobs: the succeeded indexes as text intervals (`1,3-5,7`). */
  completedIndexes?: string;
}

export interface Job extends KubeObject {
  apiVersion?: 'batch/v1';
  kind?: 'Job';
  spec: JobSpec;
  status?: JobStatus;
}
