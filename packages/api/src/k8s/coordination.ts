/**
 * coordination.k8s.io/v1 types (k8s.io/api `coordination/v1/types.go`, v0.22.8): the Lease a
 * kubelet renews as its heartbeat (`kube-node-lease/<node>`, spec §2.2 of node-lifecycle.md).
 * `acquireTime` / `renewTime` are `metav1.MicroTime` (RFC 3339 with six fractional digits).
 */
import type { KubeObject } from './meta.js';

/** `v1.NamespaceNodeLease`: where the kubelets' Leases live. */
export const NAMESPACE_NODE_LEASE = 'kube-node-lease';

export interface LeaseSpec {
  holderIdentity?: string;
  /** Seconds a candidate waits before forcing acquisition (the kubelet writes `nodeLeaseDurationSeconds`, 40). */
  leaseDurationSeconds?: number;
  acquireTime?: string;
  /** `metav1.MicroTime` of the last renewal (the kubelet's clock). */
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  apiVersion?: 'coordination.k8s.io/v1';
  kind?: 'Lease';
  spec?: LeaseSpec;
}
