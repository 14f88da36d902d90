/**
 * KubeletConfiguration for podsim: the v1beta1 fields that shape pod deletion, with the
 * defaults of `k8s.io/kubelet/config/v1beta1` v0.22.8 and of `pkg/kubelet/kubelet.go` constants
 * (spec §16). Plain data (it crosses threads). Periods are virtual µs (named `…Us`); Kubernetes
 * quantities keep their Kubernetes units (QPS per second, capacity as resource strings).
 */
import { US_PER_MINUTE, US_PER_SECOND, type Taint } from '@podsim/api';

/** How one volume of a pod unmounts (C18): each attempt takes `unmountUs`; attempts before `failUntilUs` (µs since the pod's unmount began) fail. */
export interface VolumeUnmountModel {
  readonly unmountUs?: number;
  readonly failUntilUs?: number;
  readonly error?: string;
}

export interface KubeletConfig {
  readonly nodeName: string;
  /** `kubeAPIQPS` / `kubeAPIBurst`: token bucket on every kubelet → apiserver request (not events, not heartbeats). */
  readonly kubeAPIQPS: number;
  readonly kubeAPIBurst: number;
  /** `eventRecordQPS` / `eventBurst`: the event recorder's own bucket. */
  readonly eventRecordQPS: number;
  readonly eventBurst: number;
  /** Record core/v1 Events at all (switch off for large benchmarks). */
  readonly eventsEnabled: boolean;
  /** syncLoop `syncTicker` (1 s). */
  readonly syncLoopPeriodUs: number;
  /** `housekeepingPeriod` (2 s). */
  readonly housekeepingPeriodUs: number;
  /** `plegRelistPeriod` (1 s). */
  readonly plegRelistPeriodUs: number;
  /** `syncFrequency` = pod worker resyncInterval (1 m, jitter 0.5). */
  readonly syncFrequencyUs: number;
  /** Pod worker `backOffPeriod` after a sync error (10 s, jitter 0.5). */
  readonly backOffPeriodUs: number;
  /** Status manager batch `syncPeriod` (10 s). */
  readonly statusSyncPeriodUs: number;
  /** `nodeStatusUpdateFrequency` (10 s): how often node status is computed. */
  readonly nodeStatusUpdateFrequencyUs: number;
  /** `nodeStatusReportFrequency` (5 m): an unchanged node status is PATCHed only this often (NodeLease on). */
  readonly nodeStatusReportFrequencyUs: number;
  /** `nodeLeaseDurationSeconds` (40): written to the Node Lease, renewed every 0.25 × this (10 s). */
  readonly nodeLeaseDurationSeconds: number;
  /** The heartbeat client's timeout: min(nodeStatusUpdateFrequency, nodeLeaseDuration) = 10 s (cmd/kubelet/app/server.go). */
  readonly heartbeatTimeoutUs: number;
  /** `ContainerGCPeriod` (1 m). */
  readonly containerGCPeriodUs: number;
  /** CrashLoopBackOff: initial 10 s, doubling, max `MaxContainerBackOff` 300 s. */
  readonly crashLoopBackOffInitialUs: number;
  readonly crashLoopBackOffMaxUs: number;
  /** Node capacity (allocatable = capacity). */
  readonly capacity: Readonly<Record<string, string>>;
  /** `--node-labels`: labels the kubelet registers its Node with, beside the well-known ones (`kubernetes.io/hostname`, …). */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** KubeletConfiguration `registerWithTaints`: `spec.taints` of the Node the kubelet registers. */
  readonly registerWithTaints: readonly Taint[];
  /** Default unmount model for every volume, and per volume name. */
  readonly volumeUnmount: VolumeUnmountModel;
  readonly volumeUnmountByName: Readonly<Record<string, VolumeUnmountModel>>;
  /** `volumeManager.WaitForUnmount` timeout (`podAttachAndMountTimeout` 2m3s). */
  readonly waitForUnmountTimeoutUs: number;
  /** `cgroupsPerQOS` (true): pod cgroups exist and must be destroyed before the final delete. */
  readonly cgroupsPerQOS: boolean;
  /** The node's IP (status.hostIP). */
  readonly nodeIP: string;
  /** CRI client deadline (`runtimeRequestTimeout`, 2 m); StopContainer and ExecSync add their own timeout. */
  readonly runtimeRequestTimeoutUs: number;
  /** Bound on every apiserver request (a crashed apiserver must not wedge the status manager); 504 after it. */
  readonly apiRequestTimeoutUs: number;
  /** Trace kubelet.killContainer / kubelet.preStop spans (off for 100k-pod benchmarks if wanted). */
  readonly traceContainerSpans: boolean;
  /** client-go `minWatchTimeout` (5 m): the pod watch is re-established from the last resourceVersion after minWatchTimeout × (1 + rand); 0 = never. */
  readonly minWatchTimeoutUs: number;
  /**
   * Virtual times at which the connection to the apiserver breaks (scenario fault `disconnect`,
   * together with an engine partition): the pod watch ends and is re-established.
   */
  readonly apiConnectionLossesUs: readonly number[];
  /**
   * Test-only: deliberately broken behaviour, for checking that seed exploration finds it.
   * `skipUidPrecondition`: the status manager's final DELETE omits `preconditions.uid` (§14.15).
   * `skipPreStopWait`: killContainer sends StopContainer (SIGTERM) without waiting for the preStop
   * hook (§14.5; checker prestop-before-sigterm).
   * `skipReclaimCheck`: `podResourcesAreReclaimed` answers true at once, so the status manager's
   * final DELETE goes out while the containers still run (§14.1, §14.2, §14.18).
   */
  readonly plantedBugs: readonly PlantedBug[];
  /**
   * Virtual µs after the run starts at which the kubelet process starts (the node boots): its
   * periodic loops (PLEG relist, sync loop, housekeeping, status sync) run in that phase, as the
   * kubelets of a real cluster, started at different times, do. First incarnation only; a
   * restarted kubelet starts at once. Default 0.
   */
  readonly startDelayUs: number;
  /**
   * Feature gate `ProbeTerminationGracePeriod` (beta, default false in 1.22): a container killed
   * for a failed liveness/startup probe gets that probe's terminationGracePeriodSeconds.
   */
  readonly probeTerminationGracePeriod: boolean;
}

/** Bugs a test may plant in the kubelet ({@link KubeletConfig.plantedBugs}). */
export type PlantedBug = 'skipUidPrecondition' | 'skipPreStopWait' | 'skipReclaimCheck';
export const PLANTED_BUGS: readonly PlantedBug[] = ['skipUidPrecondition', 'skipPreStopWait', 'skipReclaimCheck'];

export const DEFAULT_KUBELET_CONFIG: Omit<KubeletConfig, 'nodeName'> = {
  kubeAPIQPS: 5,
  kubeAPIBurst: 10,
  eventRecordQPS: 5,
  eventBurst: 10,
  eventsEnabled: true,
  syncLoopPeriodUs: US_PER_SECOND,
  housekeepingPeriodUs: 2 * US_PER_SECOND,
  plegRelistPeriodUs: US_PER_SECOND,
  syncFrequencyUs: US_PER_MINUTE,
  backOffPeriodUs: 10 * US_PER_SECOND,
  statusSyncPeriodUs: 10 * US_PER_SECOND,
  nodeStatusUpdateFrequencyUs: 10 * US_PER_SECOND,
  nodeStatusReportFrequencyUs: 5 * US_PER_MINUTE,
  nodeLeaseDurationSeconds: 40,
  heartbeatTimeoutUs: 10 * US_PER_SECOND,
  containerGCPeriodUs: US_PER_MINUTE,
  crashLoopBackOffInitialUs: 10 * US_PER_SECOND,
  crashLoopBackOffMaxUs: 300 * US_PER_SECOND,
  capacity: { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
  nodeLabels: {},
  registerWithTaints: [],
  volumeUnmount: { unmountUs: 0 },
  volumeUnmountByName: {},
  waitForUnmountTimeoutUs: 123 * US_PER_SECOND,
  cgroupsPerQOS: true,
  nodeIP: '10.0.0.1',
  runtimeRequestTimeoutUs: 2 * US_PER_MINUTE,
  apiRequestTimeoutUs: US_PER_MINUTE,
  traceContainerSpans: true,
  minWatchTimeoutUs: 5 * US_PER_MINUTE,
  apiConnectionLossesUs: [],
  plantedBugs: [],
  startDelayUs: 0,
  probeTerminationGracePeriod: false,
};

/**
 * Fills defaults into a partial config (what `createActor` receives). Throws on a missing
 * nodeName or a non-positive QPS: the scenario is broken, not the run.
 */
export function resolveKubeletConfig(partial: unknown): KubeletConfig {
  const p = (partial ?? {}) as Partial<KubeletConfig>;
  if (typeof p.nodeName !== 'string' || p.nodeName === '') throw new Error('kubelet config: nodeName is required');
  const c: KubeletConfig = { ...DEFAULT_KUBELET_CONFIG, ...p, nodeName: p.nodeName };
  if (!(c.kubeAPIQPS > 0) || !(c.kubeAPIBurst >= 1)) throw new Error('kubelet config: kubeAPIQPS must be > 0 and kubeAPIBurst ≥ 1');
  for (const b of c.plantedBugs) if (!PLANTED_BUGS.includes(b)) throw new Error(`kubelet config: unknown planted bug ${JSON.stringify(b)} (known: ${PLANTED_BUGS.join(', ')})`);
  return c;
}
