/**
 * The `kube-controller-manager` actor (cmd/kube-controller-manager): shared informers for pods,
 * ReplicaSets, Deployments, nodes, namespaces, PodDisruptionBudgets and Leases (one list+watch
 * each, kept in a local cache) and the ReplicaSet, Deployment, pod GC, garbage-collector,
 * namespace, disruption and node lifecycle (with its taint manager) controllers, each with its
 * own rate-limited client (`--kube-api-qps` 20 / `--kube-api-burst` 30 per controller client, as
 * the controller manager builds one client per controller; the namespace controller's is ×20 /
 * ×100, as `startNamespaceController` sets it). Controllers start once every informer they use
 * has synced.
 */
import type { Actor, Deployment, Lease, Namespace, Node, Pod, PodDisruptionBudget, ReplicaSet } from '@podsim/api';
import { DisruptionController } from '../disruption/disruptionController.js';
import { DeploymentController } from '../deployment/deploymentController.js';
import { GarbageCollector } from '../garbagecollector/garbageCollector.js';
import { NamespaceController } from '../namespace/namespaceController.js';
import type { NodeLifecycleConfig } from '../nodelifecycle/nodeHealth.js';
import { NodeLifecycleController } from '../nodelifecycle/nodeLifecycleController.js';
import { PodGCController } from '../podgc/gcController.js';
import { ReplicaSetController } from '../replicaset/replicaSet.js';
import { shellActor, type ApiConnectionConfig } from './shell.js';

export type ControllerName = 'replicaset' | 'deployment' | 'podgc' | 'garbagecollector' | 'namespace' | 'disruption' | 'nodelifecycle';

/** Plain-data configuration (all optional; defaults are kube-controller-manager v1.22's). */
export interface KubeControllerManagerConfig extends ApiConnectionConfig {
  /** Controllers to run (default: all six). */
  readonly controllers?: readonly ControllerName[];
  /** Per-controller client QPS (`--kube-api-qps`, default 20; ≤ 0 = unlimited). */
  readonly kubeAPIQPS?: number;
  /** Per-controller client burst (`--kube-api-burst`, default 30). */
  readonly kubeAPIBurst?: number;
  readonly concurrentReplicaSetSyncs?: number;
  readonly concurrentDeploymentSyncs?: number;
  readonly concurrentGCSyncs?: number;
  /** `--concurrent-namespace-syncs` (default 10). */
  readonly concurrentNamespaceSyncs?: number;
  /** `BurstReplicas` (default 500). */
  readonly burstReplicas?: number;
  readonly podGC?: {
    /** `gcCheckPeriod`, virtual µs (default 20 s). */
    readonly gcCheckPeriodUs?: number;
    /** `quarantineTime`, virtual µs (default 40 s). */
    readonly quarantineTimeUs?: number;
    /** `--terminated-pod-gc-threshold` (default 12500; 0 disables). */
    readonly terminatedPodGCThreshold?: number;
  };
  /** The node lifecycle controller's flags (`--node-monitor-period` …), µs for durations. */
  readonly nodeLifecycle?: Partial<NodeLifecycleConfig>;
}

export const KUBE_CONTROLLER_MANAGER = 'kube-controller-manager';
export const DEFAULT_KUBE_API_QPS = 20;
export const DEFAULT_KUBE_API_BURST = 30;
const ALL: readonly ControllerName[] = ['replicaset', 'deployment', 'podgc', 'garbagecollector', 'namespace', 'disruption', 'nodelifecycle'];

function checkConfig(config: unknown): KubeControllerManagerConfig {
  const c = (config ?? {}) as KubeControllerManagerConfig;
  if (typeof c !== 'object') throw new Error(`kube-controller-manager: config must be an object, got ${typeof config}`);
  for (const n of c.controllers ?? []) if (!ALL.includes(n)) throw new Error(`kube-controller-manager: unknown controller ${JSON.stringify(n)} (known: ${ALL.join(', ')})`);
  return c;
}

/** The running controllers of one incarnation (exposed for tests through {@link lastControllerManager}). */
export interface ControllerManagerState {
  readonly replicaset?: ReplicaSetController;
  readonly deployment?: DeploymentController;
  readonly podgc?: PodGCController;
  readonly garbagecollector?: GarbageCollector;
  readonly namespace?: NamespaceController;
  readonly disruption?: DisruptionController;
  readonly nodelifecycle?: NodeLifecycleController;
}

export function createActor(_id: string, config: unknown): Actor {
  const cfg = checkConfig(config);
  const enabled = new Set(cfg.controllers ?? ALL);
  const state: { -readonly [K in keyof ControllerManagerState]: ControllerManagerState[K] } = {};
  const actor: Actor & { state: ControllerManagerState } = {
    state,
    ...shellActor(cfg, (shell) => {
      const qps = cfg.kubeAPIQPS ?? DEFAULT_KUBE_API_QPS;
      const burst = cfg.kubeAPIBurst ?? DEFAULT_KUBE_API_BURST;
      let pending = 0;
      const starters: (() => void)[] = [];
      const synced = () => {
        if (--pending === 0) for (const s of starters) s();
      };
      const need = {
        pods: true,
        replicasets: enabled.has('replicaset') || enabled.has('deployment') || enabled.has('garbagecollector') || enabled.has('disruption'),
        deployments: enabled.has('deployment') || enabled.has('garbagecollector') || enabled.has('disruption'),
        nodes: enabled.has('podgc') || enabled.has('nodelifecycle'),
        leases: enabled.has('nodelifecycle'),
        namespaces: enabled.has('namespace') || enabled.has('garbagecollector'),
        poddisruptionbudgets: enabled.has('disruption'),
      };
      const mk = <T extends Pod | ReplicaSet | Deployment | Node | Namespace | PodDisruptionBudget | Lease>(
        on: boolean,
        resource: 'pods' | 'replicasets' | 'deployments' | 'nodes' | 'namespaces' | 'poddisruptionbudgets' | 'leases',
      ) => {
        if (!on) return undefined;
        pending++;
        return shell.informer<T>(resource, synced);
      };
      const pods = mk<Pod>(need.pods, 'pods')!;
      const rss = mk<ReplicaSet>(need.replicasets, 'replicasets');
      const ds = mk<Deployment>(need.deployments, 'deployments');
      const nodes = mk<Node>(need.nodes, 'nodes');
      const namespaces = mk<Namespace>(need.namespaces, 'namespaces');
      const pdbs = mk<PodDisruptionBudget>(need.poddisruptionbudgets, 'poddisruptionbudgets');
      const leases = mk<Lease>(need.leases, 'leases');
      if (enabled.has('replicaset')) {
        const c = new ReplicaSetController(shell.env, pods, rss!, shell.client('replicaset-controller', qps, burst), {
          burstReplicas: cfg.burstReplicas,
          workers: cfg.concurrentReplicaSetSyncs,
        });
        state.replicaset = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('deployment')) {
        const c = new DeploymentController(shell.env, ds!, rss!, pods, shell.client('deployment-controller', qps, burst), { workers: cfg.concurrentDeploymentSyncs });
        state.deployment = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('podgc')) {
        const c = new PodGCController(shell.env, pods, nodes!, shell.client('pod-garbage-collector', qps, burst), {
          gcCheckPeriodUs: cfg.podGC?.gcCheckPeriodUs,
          quarantineTimeUs: cfg.podGC?.quarantineTimeUs,
          terminatedPodThreshold: cfg.podGC?.terminatedPodGCThreshold,
        });
        state.podgc = c;
        starters.push(() => c.start());
      }
      if (enabled.has('garbagecollector')) {
        const c = new GarbageCollector(shell.env, { pods, replicasets: rss!, deployments: ds!, namespaces: namespaces! }, shell.client('generic-garbage-collector', qps, burst), {
          workers: cfg.concurrentGCSyncs,
        });
        state.garbagecollector = c;
        starters.push(() => {
          c.attemptToDelete.start();
          c.attemptToOrphan.start();
        });
      }
      if (enabled.has('namespace')) {
        // The namespace cleanup controller is very chatty (discovery, then lots of deletes).
        const nsQps = qps > 0 ? qps * 20 : qps;
        const c = new NamespaceController(shell.env, namespaces!, shell.client('namespace-controller', nsQps, burst * 100), { workers: cfg.concurrentNamespaceSyncs });
        state.namespace = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('disruption')) {
        const c = new DisruptionController(shell.env, pdbs!, pods, rss!, ds!, shell.client('disruption-controller', qps, burst));
        state.disruption = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('nodelifecycle')) {
        // One `node-controller` client for the controller and its taint manager (spec §3.1).
        const c = new NodeLifecycleController(shell.env, nodes!, pods, leases!, shell.client('node-controller', qps, burst), cfg.nodeLifecycle);
        state.nodelifecycle = c;
        starters.push(() => c.start());
      }
    }),
  };
  return actor;
}
