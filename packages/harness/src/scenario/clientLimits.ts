/**
 * Client-side rate limits of a scenario's API clients, as Kubernetes v1.22 sets them: each
 * kubectl command (client-go `rest.DefaultQPS` 5 / `DefaultBurst` 10, which kubectl v0.22.8 does
 * not override), every kube-controller-manager controller (`--kube-api-qps` 20 /
 * `--kube-api-burst` 30), the kube-scheduler (KubeSchedulerConfiguration `clientConnection` 50 /
 * 100) and each kubelet (`kubeAPIQPS` 5 / `kubeAPIBurst` 10). `cluster.kubectl`,
 * `cluster.controllerManager`, `cluster.scheduler` and `cluster.kubelet` change them; a QPS of 0
 * turns a limit off (podsim's; client-go reads 0 as "use the default").
 */
import { DEFAULT_KUBE_API_BURST, DEFAULT_KUBE_API_QPS } from '@podsim/controllers/actor/kubeControllerManagerActor';
import { DEFAULT_SCHEDULER_BURST, DEFAULT_SCHEDULER_QPS } from '@podsim/controllers/actor/kubeSchedulerActor';
import { US_PER_SECOND, type KubeObject } from '@podsim/api';
import { DEFAULT_KUBELET_CONFIG } from '@podsim/kubelet/kubeletConfig';
import { KUBECTL_BURST, KUBECTL_QPS, type DriverStep } from '../driver/steps.js';
import type { ClusterSpec } from './schema.js';

export interface ClientLimit {
  readonly qps: number;
  readonly burst: number;
}

/** The limits a run uses, for the run header and `--json`. */
export interface ClientLimits {
  readonly kubectl: ClientLimit;
  readonly controllerManager: ClientLimit;
  readonly scheduler: ClientLimit;
  /** `cluster.kubelet` (a node's own `kubelet:` may differ). */
  readonly kubelet: ClientLimit;
}

export function clientLimits(cluster: ClusterSpec): ClientLimits {
  const of = (l: { kubeAPIQPS?: number; kubeAPIBurst?: number } | undefined, qps: number, burst: number): ClientLimit => ({ qps: l?.kubeAPIQPS ?? qps, burst: l?.kubeAPIBurst ?? burst });
  return {
    kubectl: of(cluster.kubectl, KUBECTL_QPS, KUBECTL_BURST),
    controllerManager: of(cluster.controllerManager, DEFAULT_KUBE_API_QPS, DEFAULT_KUBE_API_BURST),
    scheduler: of(cluster.scheduler, DEFAULT_SCHEDULER_QPS, DEFAULT_SCHEDULER_BURST),
    kubelet: of(cluster.kubelet, DEFAULT_KUBELET_CONFIG.kubeAPIQPS, DEFAULT_KUBELET_CONFIG.kubeAPIBurst),
  };
}

/** `kubectl 5/10, kube-controller-manager 20/30, kube-scheduler 50/100, kubelet 5/10` (qps/burst; `off` for none). */
export function formatClientLimits(l: ClientLimits): string {
  const f = (c: ClientLimit) => (c.qps > 0 ? `${c.qps}/${c.burst}` : 'off');
  return `client qps/burst: kubectl ${f(l.kubectl)}, kube-controller-manager ${f(l.controllerManager)}, kube-scheduler ${f(l.scheduler)}, kubelet ${f(l.kubelet)}`;
}

/**
 * Virtual µs a run's bound must allow for the kubectl limiter: a step that acts on every pod
 * (`delete -l`, `drain`, …) may send one request per object, at `qps` a second. Objects are
 * bounded by the pods the manifests and scale steps can make.
 */
export function throttleAllowanceUs(steps: readonly DriverStep[], objects: readonly KubeObject[], kubectl: ClientLimit): number {
  if (kubectl.qps <= 0) return 0;
  const replicas = (o: KubeObject) => ((o as { spec?: { replicas?: number } }).spec?.replicas ?? 1);
  let pods = objects.reduce((n, o) => n + (o.kind === 'Pod' ? 1 : o.kind === 'Deployment' || o.kind === 'ReplicaSet' || o.kind === 'StatefulSet' ? replicas(o) : 0), 0);
  for (const s of steps) if (s.kind === 'scale') pods += s.replicas;
  const perStep = ((pods + objects.length + kubectl.burst) / kubectl.qps) * US_PER_SECOND;
  const acting = steps.filter((s) => s.kind !== 'sleep' && s.kind !== 'watch' && s.kind !== 'fault').length;
  return Math.ceil(perStep * acting);
}
