/**
 * meta/v1 types (k8s.io/apimachinery `pkg/apis/meta/v1/types.go`, v0.22.8), in their JSON wire
 * shape: the same objects travel between actors, are printed, and are served to kubectl.
 * Timestamps are RFC 3339 strings; `resourceVersion` is a decimal string.
 */
import type { StatusReason } from '../errors.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  /** Always empty when served (deprecated; cleared by the apiserver since 1.20). */
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  /** Ignored and cleared by the apiserver (`rest.BeforeCreate`/`BeforeUpdate`). */
  clusterName?: string;
  managedFields?: ManagedFieldsEntry[];
}

/** The GC finalizers `deletionFinalizersForGarbageCollection` adds (metav1 `FinalizerOrphanDependents`, `FinalizerDeleteDependents`). */
export const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';
export const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';

/** `meta.k8s.io/v1 PartialObjectMetadata`: what a Table row carries by default (`includeObject=Metadata`). */
export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ObjectMeta;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Anything with `apiVersion`/`kind`/`metadata`. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** `metav1.DeleteOptions`. `gracePeriodSeconds` absent means "not sent" (kubectl's −1). */
export interface DeleteOptions {
  kind?: 'DeleteOptions';
  apiVersion?: string;
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  orphanDependents?: boolean;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  dryRun?: string[];
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** `metav1.Status`: every API error, and success bodies where no object is returned. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** `metav1.DeletionPropagation`. */
export type DeletionPropagation = 'Orphan' | 'Background' | 'Foreground';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** `metav1.WatchEvent`: `object` is the resource (or a Status for ERROR, a Table row for as=Table). */
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** `metav1.TableRowCondition` (printPod marks Succeeded/Failed pods `Completed`). */
export interface TableRowCondition {
  type: 'Completed' | string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

export interface TableRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
  /** The object (or PartialObjectMetadata) the row was printed from. */
  object?: unknown;
}

/** `metav1.IncludeObjectPolicy`: what `row.object` carries (`Metadata` is the default). */
export type IncludeObjectPolicy = 'None' | 'Metadata' | 'Object';

/** `meta.k8s.io/v1 Table`, as the apiserver returns for `Accept: ...;as=Table`. */
export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}
