/**
 * apps/v1 StatefulSet and ControllerRevision, core/v1 PersistentVolumeClaim (k8s.io/api
 * `apps/v1/types.go` and `core/v1/types.go`, v0.22.8), in their JSON wire shape. 1.22 has no
 * `persistentVolumeClaimRetentionPolicy` and no `rollingUpdate.maxUnavailable`.
 */
import type { KubeObject, LabelSelector, ObjectMeta } from './meta.js';
import type { PodTemplateSpec } from './apps.js';

export interface StatefulSetRollingUpdateStrategy {
  /** Ordinals ≥ partition are updated (default 0). */
  partition?: number;
}

export interface StatefulSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: StatefulSetRollingUpdateStrategy;
}

/** A `volumeClaimTemplates` entry (a PVC without its namespace). */
export interface PersistentVolumeClaimTemplate {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: PersistentVolumeClaimSpec;
}

export interface StatefulSetSpec {
  /** Default 1. */
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  volumeClaimTemplates?: PersistentVolumeClaimTemplate[];
  serviceName?: string;
  /** Default OrderedReady. */
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  updateStrategy?: StatefulSetUpdateStrategy;
  /** Default 10. */
  revisionHistoryLimit?: number;
  /** Alpha in 1.22 (StatefulSetMinReadySeconds, off): cleared to 0 by the apiserver. */
  minReadySeconds?: number;
}

export interface StatefulSetCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  /** Not omitempty on the wire. */
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: StatefulSetCondition[];
  availableReplicas?: number;
}

export interface StatefulSet extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'StatefulSet';
  spec: StatefulSetSpec;
  status?: StatefulSetStatus;
}

/**
 * apps/v1 ControllerRevision: an immutable snapshot of a workload's pod template. For a
 * StatefulSet (and a DaemonSet) `data` is the strategic-merge patch
 * `{spec: {template: {…, $patch: replace}}}` and `revision` a monotonically increasing number.
 */
export interface ControllerRevision extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'ControllerRevision';
  data?: Record<string, unknown>;
  revision: number;
}

export interface PersistentVolumeClaimSpec {
  accessModes?: string[];
  selector?: LabelSelector;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeName?: string;
  storageClassName?: string;
  volumeMode?: string;
}

export interface PersistentVolumeClaimStatus {
  phase?: 'Pending' | 'Bound' | 'Lost';
  accessModes?: string[];
  capacity?: Record<string, string>;
}

export interface PersistentVolumeClaim extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'PersistentVolumeClaim';
  spec: PersistentVolumeClaimSpec;
  status?: PersistentVolumeClaimStatus;
}

/** `apps/v1` label constants (`StatefulSetPodNameLabel`, `StatefulSetRevisionLabel` = `ControllerRevisionHashLabelKey`). */
export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
