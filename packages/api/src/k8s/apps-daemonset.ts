/**
 * apps/v1 DaemonSet (k8s.io/api `apps/v1/types.go`, v0.22.8), with `maxSurge` (DaemonSetUpdateSurge,
 * Beta on in 1.22).
 */
import type { KubeObject, LabelSelector } from './meta.js';
import type { PodTemplateSpec } from './apps.js';

export { CONTROLLER_REVISION_HASH_LABEL } from './apps-statefulset.js';
/** `extensions.DaemonSetTemplateGenerationKey`: the template generation label (deprecated). */
export const DAEMONSET_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

export interface RollingUpdateDaemonSet {
  maxUnavailable?: number | string;
  maxSurge?: number | string;
}

export interface DaemonSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: RollingUpdateDaemonSet;
}

export interface DaemonSetSpec {
  selector: LabelSelector;
  template: PodTemplateSpec;
  updateStrategy?: DaemonSetUpdateStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

export interface DaemonSetCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DaemonSetStatus {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: DaemonSetCondition[];
}

export interface DaemonSet extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'DaemonSet';
  spec: DaemonSetSpec;
  status?: DaemonSetStatus;
}
