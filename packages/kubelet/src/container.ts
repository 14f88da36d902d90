/**
 * The kubelet's view of the runtime (`pkg/kubelet/container/runtime.go`: `Pod`, `PodStatus`,
 * `ContainerStatus`, `ConvertPodStatusToRunningPod`) and the labels/annotations kuberuntime puts
 * on CRI objects (`pkg/kubelet/kuberuntime/labels.go`) so that a pod can be recognised — and its
 * grace period and preStop hook restored — from the runtime alone (after a kubelet restart).
 * Times are virtual µs.
 */
import type { cri, LifecycleHandler, Pod } from '@podsim/api';

export const KUBERNETES_POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const KUBERNETES_POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const KUBERNETES_POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const KUBERNETES_CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';
export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const POD_DELETION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.deletionGracePeriod';
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
export const CONTAINER_PRESTOP_HANDLER_ANNOTATION = 'io.kubernetes.container.preStopHandler';
/** `containerPortsLabel`: the container's ports as JSON (labels.go `newContainerAnnotations`). */
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';

/** `kubecontainer.State`. */
export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** `kubecontainer.Status` of one container (newest first in a PodStatus). */
export interface RuntimeContainerStatus {
  readonly id: string;
  readonly name: string;
  readonly state: RuntimeContainerState;
  readonly createdAt: number;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly exitCode: number;
  readonly reason: string;
  readonly message: string;
  readonly image: string;
  readonly imageRef: string;
  readonly restartCount: number;
  readonly podSandboxId: string;
  /** The `io.kubernetes.container.hash` the container was created with (`kubecontainer.HashContainer` of its spec). */
  readonly hash?: string;
}

export interface RuntimeSandboxStatus {
  readonly id: string;
  readonly state: cri.PodSandboxState;
  readonly createdAt: number;
  readonly attempt: number;
  readonly ip?: string;
}

/** `kubecontainer.PodStatus`: what GetPodStatus returns and the PLEG caches. */
export interface RuntimePodStatus {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly ips: readonly string[];
  /** Newest first. */
  readonly sandboxStatuses: readonly RuntimeSandboxStatus[];
  /** Newest first. */
  readonly containerStatuses: readonly RuntimeContainerStatus[];
}

/** `kubecontainer.Pod`: a pod as the runtime has it (running containers / sandboxes for kills). */
export interface RuntimePod {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly containers: readonly { readonly id: string; readonly name: string; readonly state: RuntimeContainerState }[];
  readonly sandboxes: readonly { readonly id: string; readonly state: cri.PodSandboxState }[];
}

export function emptyPodStatus(uid: string, name = '', namespace = ''): RuntimePodStatus {
  return { uid, name, namespace, ips: [], sandboxStatuses: [], containerStatuses: [] };
}

export function toRuntimeState(s: cri.ContainerState): RuntimeContainerState {
  switch (s) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

/** `ConvertPodStatusToRunningPod`: only running containers, and every sandbox. */
export function convertPodStatusToRunningPod(s: RuntimePodStatus): RuntimePod {
  return {
    uid: s.uid,
    name: s.name,
    namespace: s.namespace,
    containers: s.containerStatuses.filter((c) => c.state === 'running').map((c) => ({ id: c.id, name: c.name, state: c.state })),
    sandboxes: s.sandboxStatuses.map((sb) => ({ id: sb.id, state: sb.state })),
  };
}

/** `FindContainerStatusByName`: the newest status of container `name`. */
export function findContainerStatusByName(s: RuntimePodStatus, name: string): RuntimeContainerStatus | undefined {
  return s.containerStatuses.find((c) => c.name === name);
}

/** `kubecontainer.Pod.ToAPIPod`: the stand-in pod for a runtime-only (orphaned) pod. */
export function runtimePodToAPIPod(p: RuntimePod): Pod {
  return { metadata: { name: p.name, namespace: p.namespace, uid: p.uid }, spec: { containers: [] } };
}

/** Container spec fields restored from a container's labels/annotations (`restoreSpecsFromContainerLabels`). */
export interface RestoredContainerInfo {
  readonly terminationGracePeriodSeconds?: number;
  readonly deletionGracePeriodSeconds?: number;
  readonly preStop?: LifecycleHandler;
}

export function restoreSpecsFromContainerAnnotations(annotations: Readonly<Record<string, string>>): RestoredContainerInfo {
  const num = (k: string) => (annotations[k] === undefined ? undefined : Number(annotations[k]));
  const pre = annotations[CONTAINER_PRESTOP_HANDLER_ANNOTATION];
  return {
    terminationGracePeriodSeconds: num(POD_TERMINATION_GRACE_PERIOD_ANNOTATION),
    deletionGracePeriodSeconds: num(POD_DELETION_GRACE_PERIOD_ANNOTATION),
    preStop: pre === undefined ? undefined : (JSON.parse(pre) as LifecycleHandler),
  };
}
