/**
 * The `kube-controller-manager` actor (cmd/kube-controller-manager): shared informers for pods,
 * ReplicaSets, Deployments, nodes, namespaces, PodDisruptionBudgets, Leases, Jobs, DaemonSets,
 * StatefulSets, ControllerRevisions and PersistentVolumeClaims (one list+watch each, kept in a
 * local cache) and the ReplicaSet, Deployment, pod GC, garbage-collector, namespace, disruption,
 * node lifecycle (with its taint manager), Job, TTL-after-finished, DaemonSet and StatefulSet
 * controllers (and, issue #18, the endpoint, endpointslice and endpointslicemirroring controllers
 * over Service, Endpoints and EndpointSlice informers), each with its
 * own rate-limited client (`--kube-api-qps` 20 / `--kube-api-burst` 30 per controller client, as
 * the controller manager builds one client per controller; the namespace controller's is ×20 /
 * ×100, as `startNamespaceController` sets it). Controllers start once every informer they use
 * has synced.
 */
import type { Actor, ControllerRevision, DaemonSet, Deployment, EndpointSlice, Endpoints, Job, KubeObject, Lease, Namespace, Node, PersistentVolumeClaim, Pod, PodDisruptionBudget, ReplicaSet, ResourceName, Service, StatefulSet } from '@podsim/api';
import { StatefulSetController } from '../statefulset/statefulSet.js';
import { EndpointsController } from '../endpoint/endpointsController.js';
import { EndpointSliceController } from '../endpointslice/endpointSliceController.js';
import { EndpointSliceMirroringController } from '../endpointslicemirroring/endpointSliceMirroringController.js';
import { DisruptionController } from '../disruption/disruptionController.js';
import { DeploymentController } from '../deployment/deploymentController.js';
import { GarbageCollector } from '../garbagecollector/garbageCollector.js';
import { JobController } from '../job/jobController.js';
import { DaemonSetsController } from '../daemon/daemonController.js';
import { TTLAfterFinishedController } from '../ttlafterfinished/ttlAfterFinishedController.js';
import { NamespaceController } from '../namespace/namespaceController.js';
import type { NodeLifecycleConfig } from '../nodelifecycle/nodeHealth.js';
import { NodeLifecycleController } from '../nodelifecycle/nodeLifecycleController.js';
import { PodGCController } from '../podgc/gcController.js';
import { ReplicaSetController } from '../replicaset/replicaSet.js';
import { shellActor, type ApiConnectionConfig } from './shell.js';
import { plantedBugSet, type ControllerPlantedBug } from '../plantedBugs.js';

export type ControllerName = 'replicaset' | 'deployment' | 'podgc' | 'garbagecollector' | 'namespace' | 'disruption' | 'nodelifecycle' | 'job' | 'ttl-after-finished' | 'daemonset' | 'statefulset' | 'endpoint' | 'endpointslice' | 'endpointslicemirroring';

/** Plain-data configuration (all optional; defaults are kube-controller-manager v1.22's). */
export interface KubeControllerManagerConfig extends ApiConnectionConfig {
  /** Controllers to run (default: all of them). */
  readonly controllers?: readonly ControllerName[];
  /** Per-controller client QPS (`--kube-api-qps`, default 20; ≤ 0 = unlimited). */
  readonly kubeAPIQPS?: number;
  /** Per-controller client burst (`--kube-api-burst`, default 30). */
  readonly kubeAPIBurst?: number;
  readonly concurrentReplicaSetSyncs?: number;
  readonly concurrentDeploymentSyncs?: number;
  readonly concurrentGCSyncs?: number;
  /** `--concurrent-daemonset-syncs` (default 2). */
  readonly concurrentDaemonSetSyncs?: number;
  /** `--concurrent-job-syncs` (default 5). */
  readonly concurrentJobSyncs?: number;
  /** `--concurrent-ttl-after-finished-syncs` (default 5). */
  readonly concurrentTTLSyncs?: number;
  /** `--concurrent-statefulset-syncs` (default 5). */
  readonly concurrentStatefulSetSyncs?: number;
  /** `--concurrent-namespace-syncs` (default 10). */
  readonly concurrentNamespaceSyncs?: number;
  /** `BurstReplicas` (default 500). */
  readonly burstReplicas?: number;
  /** `--concurrent-endpoint-syncs` (default 5). */
  readonly concurrentEndpointSyncs?: number;
  /** `--endpoint-updates-batch-period`, virtual µs (default 0). */
  readonly endpointUpdatesBatchPeriodUs?: number;
  /** `--concurrent-service-endpoint-syncs` (default 5). */
  readonly concurrentServiceEndpointSyncs?: number;
  /** `--max-endpoints-per-slice` (default 100). */
  readonly maxEndpointsPerSlice?: number;
  /** `--endpointslice-updates-batch-period`, virtual µs (default 0). */
  readonly endpointSliceUpdatesBatchPeriodUs?: number;
  /** `--mirroring-concurrent-service-endpoint-syncs` (default 5). */
  readonly mirroringConcurrentServiceEndpointSyncs?: number;
  /** `--mirroring-max-endpoints-per-subset` (default 1000). */
  readonly mirroringMaxEndpointsPerSubset?: number;
  /** `--mirroring-endpointslice-updates-batch-period`, virtual µs (default 0). */
  readonly mirroringEndpointSliceUpdatesBatchPeriodUs?: number;
  /** `--feature-gates` podsim models here (EndpointSliceTerminatingCondition: beta, default on in 1.22). */
  readonly featureGates?: { readonly EndpointSliceTerminatingCondition?: boolean };
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
  /** Test-only: bugs planted in the controllers (plantedBugs.ts); never set outside tests. */
  readonly plantedBugs?: readonly ControllerPlantedBug[];
}

export const KUBE_CONTROLLER_MANAGER = 'kube-controller-manager';
export const DEFAULT_KUBE_API_QPS = 20;
export const DEFAULT_KUBE_API_BURST = 30;
const ALL: readonly ControllerName[] = ['replicaset', 'deployment', 'podgc', 'garbagecollector', 'namespace', 'disruption', 'nodelifecycle', 'job', 'ttl-after-finished', 'daemonset', 'statefulset', 'endpoint', 'endpointslice', 'endpointslicemirroring'];

function checkConfig(config: unknown): KubeControllerManagerConfig {
  const c = (config ?? {}) as KubeControllerManagerConfig;
  if (typeof c !== 'object') throw new Error(`kube-controller-manager: config must be an object, got ${typeof config}`);
  for (const n of c.controllers ?? []) if (!ALL.includes(n)) throw new Error(`kube-controller-manager: unknown controller ${JSON.stringify(n)} (known: ${ALL.join(', ')})`);
  plantedBugSet(c.plantedBugs);
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
  readonly job?: JobController;
  readonly 'ttl-after-finished'?: TTLAfterFinishedController;
  readonly daemonset?: DaemonSetsController;
  readonly statefulset?: StatefulSetController;
  readonly endpoint?: EndpointsController;
  readonly endpointslice?: EndpointSliceController;
  readonly endpointslicemirroring?: EndpointSliceMirroringController;
  readonly nodelifecycle?: NodeLifecycleController;
}

export function createActor(_id: string, config: unknown): Actor {
  const cfg = checkConfig(config);
  const enabled = new Set(cfg.controllers ?? ALL);
  const bugs = plantedBugSet(cfg.plantedBugs);
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
        nodes: enabled.has('podgc') || enabled.has('daemonset') || enabled.has('nodelifecycle'),
        leases: enabled.has('nodelifecycle'),
        namespaces: enabled.has('namespace') || enabled.has('garbagecollector'),
        poddisruptionbudgets: enabled.has('disruption'),
        jobs: enabled.has('job') || enabled.has('ttl-after-finished') || enabled.has('garbagecollector'),
        daemonsets: enabled.has('daemonset') || enabled.has('garbagecollector'),
        statefulsets: enabled.has('statefulset') || enabled.has('garbagecollector'),
        controllerrevisions: enabled.has('statefulset') || enabled.has('garbagecollector'),
        persistentvolumeclaims: enabled.has('statefulset'),
        services: enabled.has('endpoint') || enabled.has('endpointslice') || enabled.has('endpointslicemirroring'),
        endpoints: enabled.has('endpoint') || enabled.has('endpointslicemirroring'),
        endpointslices: enabled.has('endpointslice') || enabled.has('endpointslicemirroring'),
      };
      const mk = <T extends KubeObject>(on: boolean, resource: ResourceName) => {
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
      const jobs = mk<Job>(need.jobs, 'jobs');
      const daemonsets = mk<DaemonSet>(need.daemonsets, 'daemonsets');
      const sets = mk<StatefulSet>(need.statefulsets, 'statefulsets');
      const revisions = mk<ControllerRevision>(need.controllerrevisions, 'controllerrevisions');
      const pvcs = mk<PersistentVolumeClaim>(need.persistentvolumeclaims, 'persistentvolumeclaims');
      const services = mk<Service>(need.services, 'services');
      const endpoints = mk<Endpoints>(need.endpoints, 'endpoints');
      const endpointslices = mk<EndpointSlice>(need.endpointslices, 'endpointslices');
      const leases = mk<Lease>(need.leases, 'leases');
      if (enabled.has('replicaset')) {
        const c = new ReplicaSetController(shell.env, pods, rss!, shell.client('replicaset-controller', qps, burst), {
          burstReplicas: cfg.burstReplicas,
          workers: cfg.concurrentReplicaSetSyncs,
          plantedBugs: bugs,
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
          plantedBugs: bugs,
        });
        state.podgc = c;
        starters.push(() => c.start());
      }
      if (enabled.has('garbagecollector')) {
        const c = new GarbageCollector(shell.env, { pods, replicasets: rss!, deployments: ds!, namespaces: namespaces!, jobs, daemonsets, statefulsets: sets, controllerrevisions: revisions }, shell.client('generic-garbage-collector', qps, burst), {
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
      if (enabled.has('job')) {
        const c = new JobController(shell.env, pods, jobs!, shell.client('job-controller', qps, burst), { workers: cfg.concurrentJobSyncs });
        state.job = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('ttl-after-finished')) {
        const c = new TTLAfterFinishedController(shell.env, jobs!, shell.client('ttl-after-finished-controller', qps, burst), { workers: cfg.concurrentTTLSyncs });
        state['ttl-after-finished'] = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('daemonset')) {
        const c = new DaemonSetsController(shell.env, daemonsets!, pods, nodes!, shell.client('daemon-set-controller', qps, burst), {
          workers: cfg.concurrentDaemonSetSyncs,
        });
        state.daemonset = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('statefulset')) {
        const c = new StatefulSetController(shell.env, pods, sets!, revisions!, pvcs!, shell.client('statefulset-controller', qps, burst), {
          workers: cfg.concurrentStatefulSetSyncs,
        });
        state.statefulset = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('endpoint')) {
        const c = new EndpointsController(shell.env, services!, pods, endpoints!, shell.client('endpoint-controller', qps, burst), {
          workers: cfg.concurrentEndpointSyncs,
          batchPeriodUs: cfg.endpointUpdatesBatchPeriodUs,
        });
        state.endpoint = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('endpointslice')) {
        const c = new EndpointSliceController(shell.env, services!, pods, endpointslices!, shell.client('endpointslice-controller', qps, burst), {
          workers: cfg.concurrentServiceEndpointSyncs,
          maxEndpointsPerSlice: cfg.maxEndpointsPerSlice,
          batchPeriodUs: cfg.endpointSliceUpdatesBatchPeriodUs,
          gates: cfg.featureGates?.EndpointSliceTerminatingCondition !== undefined ? { endpointSliceTerminatingCondition: cfg.featureGates.EndpointSliceTerminatingCondition } : undefined,
        });
        state.endpointslice = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('endpointslicemirroring')) {
        // startEndpointSliceMirroringController: its own `endpointslicemirroring-controller` client.
        const c = new EndpointSliceMirroringController(shell.env, services!, endpoints!, endpointslices!, shell.client('endpointslicemirroring-controller', qps, burst), {
          workers: cfg.mirroringConcurrentServiceEndpointSyncs,
          maxEndpointsPerSubset: cfg.mirroringMaxEndpointsPerSubset,
          batchPeriodUs: cfg.mirroringEndpointSliceUpdatesBatchPeriodUs,
        });
        state.endpointslicemirroring = c;
        starters.push(() => c.workers.start());
      }
      if (enabled.has('nodelifecycle')) {
        // One `node-controller` client for the controller and its taint manager (spec §3.1).
        const c = new NodeLifecycleController(shell.env, nodes!, pods, leases!, shell.client('node-controller', qps, burst), cfg.nodeLifecycle, bugs);
        state.nodelifecycle = c;
        starters.push(() => c.start());
      }
    }),
  };
  return actor;
}
