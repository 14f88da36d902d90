/**
 * Reading pod state from the CRI runtime: `kubeGenericRuntimeManager.GetPodStatus` and
 * `GetPods` (`pkg/kubelet/kuberuntime/kuberuntime_manager.go`). GetPodStatus lists the pod's
 * sandboxes and containers by the pod UID label, then asks `PodSandboxStatus` /
 * `ContainerStatus` for each, in parallel; results are newest first.
 */
import type { cri } from '@podsim/api';
import type { KubeletEnv } from '../env.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  KUBERNETES_CONTAINER_NAME_LABEL,
  KUBERNETES_POD_UID_LABEL,
  toRuntimeState,
  type RuntimeContainerStatus,
  type RuntimePodStatus,
  type RuntimeSandboxStatus,
} from '../container.js';

/** Joins `n` callbacks: `done` runs once all `n` called `one()` (at once if n = 0). */
export function join(n: number, done: () => void): () => void {
  let left = n;
  if (left === 0) done();
  return () => {
    if (--left === 0) done();
  };
}

/**
 * `GetPodStatus(uid, name, namespace)`. `cb` gets the status, or an error message if a list
 * call failed (a NotFound for an individual container just drops that container).
 */
export function getPodStatus(env: KubeletEnv, uid: string, name: string, namespace: string, cb: (s: RuntimePodStatus | string) => void): void {
  const sel = { [KUBERNETES_POD_UID_LABEL]: uid };
  const sandboxes: RuntimeSandboxStatus[] = [];
  const containers: RuntimeContainerStatus[] = [];
  let error: string | undefined;
  const finish = join(2, () => {
    if (error !== undefined) return cb(error);
    sandboxes.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
    containers.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
    const ip = sandboxes.find((s) => s.state === 'SANDBOX_READY' && s.ip)?.ip;
    cb({ uid, name, namespace, ips: ip ? [ip] : [], sandboxStatuses: sandboxes, containerStatuses: containers });
  });
  env.cri({ type: 'ListPodSandbox', filter: { labelSelector: sel } }, (r) => {
    if (r.error) {
      error = `ListPodSandbox: ${r.error.message}`;
      return finish();
    }
    const one = join(r.items.length, finish);
    for (const sb of r.items) {
      env.cri({ type: 'PodSandboxStatus', podSandboxId: sb.id }, (s) => {
        if (s.status) sandboxes.push({ id: s.status.id, state: s.status.state, createdAt: s.status.createdAt, attempt: s.status.metadata.attempt, ip: s.status.network?.ip });
        one();
      });
    }
  });
  env.cri({ type: 'ListContainers', filter: { labelSelector: sel } }, (r) => {
    if (r.error) {
      error = `ListContainers: ${r.error.message}`;
      return finish();
    }
    const one = join(r.containers.length, finish);
    for (const c of r.containers) {
      env.cri({ type: 'ContainerStatus', containerId: c.id }, (s) => {
        if (s.status) containers.push(toContainerStatus(s.status));
        one();
      });
    }
  });
}

export function toContainerStatus(s: cri.ContainerStatus): RuntimeContainerStatus {
  return {
    id: s.id,
    name: s.labels[KUBERNETES_CONTAINER_NAME_LABEL] ?? s.metadata.name,
    state: toRuntimeState(s.state),
    createdAt: s.createdAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    exitCode: s.exitCode,
    reason: s.reason,
    message: s.message,
    image: s.image.image,
    imageRef: s.imageRef,
    restartCount: Number(s.annotations[CONTAINER_RESTART_COUNT_ANNOTATION] ?? s.metadata.attempt ?? 0),
    podSandboxId: s.podSandboxId,
    ...(s.annotations[CONTAINER_HASH_ANNOTATION] !== undefined ? { hash: s.annotations[CONTAINER_HASH_ANNOTATION] } : {}),
  };
}
