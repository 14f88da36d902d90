/**
 * The cluster of `podsim bench`: N nodes (kubelet + CRI runtime each, 1.22 defaults: kubelet API
 * QPS 5 / burst 10), the apiserver, kube-controller-manager, kube-scheduler and the bench driver
 * (`src/driver/stormDriver.ts`), with Deployments whose pods behave like a mixed fleet on SIGTERM (seeded
 * `podsim.dev/*` behaviour): half drain and exit within 0–5 s, a quarter ignore SIGTERM and are
 * SIGKILLed when their 10 s grace ends, a quarter run an exec `sleep 3` preStop hook first.
 * Deviations from a scenario run (all configuration, none in the deletion path): kubelet Events
 * are off (their own token bucket; podsim's apiserver keeps Events forever), and the controller
 * manager and scheduler clients are unthrottled unless `controlPlaneQps` is set (creation is not
 * what the bench measures; at their default 20 / 50 QPS, 100k pods take over an hour to create).
 */
import type { Container, Deployment, Pod } from '@podsim/api';
import { US_PER_SECOND, deriveStream } from '@podsim/api';
import type { LatencyConfig } from '@podsim/sim';
import { ACTOR_MODULES, type ActorPlan } from '../scenario/compile.js';
import type { StormDriverConfig } from '../driver/stormDriver.js';
import { nodePodCidr } from '../nodeCidrs.js';

export const STORM_DRIVER_MODULE = '@podsim/harness/actor/stormDriverActor';
export const BENCH_NAMESPACE = 'default';
/** Largest ReplicaSet the bench creates (BurstReplicas: one RS sync creates ≤ 500 pods). */
const PODS_PER_DEPLOYMENT = 500;
const PAUSE_IMAGE = 'registry.k8s.io/pause:3.5';

/**
 * Kubelets boot at seeded times uniform in [0, this) (`startDelayUs`): a real cluster's kubelets
 * started at different times, so their 1 s PLEG relists, 1 s sync loops, 2 s housekeeping and
 * 10 s status syncs run out of phase (with every kubelet started at 0, 60 % of the deletion
 * phase's events fell in the first 10 ms of each second). The load starts once every node has
 * booted and registered ({@link LOAD_START_US}).
 */
export const KUBELET_START_SPREAD_US = 10 * US_PER_SECOND;
/** When the driver starts the load: every kubelet has started and registered its Node by then. */
export const LOAD_START_US = KUBELET_START_SPREAD_US + US_PER_SECOND;

/**
 * What the deletion SLI assumes of the apiserver (printed in the bench header and the JSON line):
 * podsim's apiserver answers a request in zero virtual time at its arrival, and admits any number
 * of requests at once. A real kube-apiserver spends CPU on each request (admission, etcd,
 * encoding; etcd alone is ~ms per write) and rejects with 429 beyond `--max-requests-inflight`
 * (default 400) read-only or `--max-mutating-requests-inflight` (default 200) mutating requests
 * in flight; neither is modelled, so the SLI is the kubelets' QPS and the protocol's waits only.
 */
export const BENCH_APISERVER_MODEL = 'apiserver: zero processing time per request, no in-flight limit (--max-requests-inflight 400 / --max-mutating-requests-inflight 200 not modelled)';

/** Default one-way minimum latency of a network link of the bench cluster (kubelet ↔ apiserver), µs. */
export const BENCH_NETWORK_US = 1_000;
/** One-way minimum latency kubelet ↔ its CRI runtime (gRPC over a unix socket on the node), µs. */
export const BENCH_NODE_LOCAL_US = 100;

/**
 * Link latencies of the bench cluster. A real kubelet reaches the apiserver over the network
 * (often through a load balancer in front of an HA control plane): a same-zone round trip is
 * ~0.2–0.5 ms, a cross-zone one ~1–2 ms, plus TLS / HTTP/2 framing; `networkUs` (default 1 ms
 * one way, + up to half of it as jitter) sits in that range. The controller manager, scheduler
 * and driver reach the apiserver inside the control plane at half that; the kubelet and its
 * runtime share the node (100 µs + 50 µs). The node-local link never crosses host threads under
 * `nodes:N`, so the lookahead between threads is the network latency.
 */
export function benchLatency(networkUs = BENCH_NETWORK_US): LatencyConfig {
  const net = { minUs: networkUs, jitterUs: Math.floor(networkUs / 2) };
  const cp = { minUs: Math.max(1, Math.floor(networkUs / 2)), jitterUs: Math.floor(networkUs / 4) };
  const local = { minUs: BENCH_NODE_LOCAL_US, jitterUs: BENCH_NODE_LOCAL_US / 2 };
  return {
    default: net,
    links: [
      { from: 'kubelet/*', to: 'runtime/*', ...local },
      { from: 'runtime/*', to: 'kubelet/*', ...local },
      { from: 'kube-controller-manager', to: 'apiserver', ...cp },
      { from: 'apiserver', to: 'kube-controller-manager', ...cp },
      { from: 'kube-scheduler', to: 'apiserver', ...cp },
      { from: 'apiserver', to: 'kube-scheduler', ...cp },
      { from: 'driver', to: 'apiserver', ...cp },
      { from: 'apiserver', to: 'driver', ...cp },
    ],
  };
}

export interface StormOptions {
  readonly nodes: number;
  readonly podsPerNode: number;
  readonly containers: number;
  readonly seed: number;
  readonly placement: string;
  /** kube-controller-manager and kube-scheduler client QPS (≤ 0 or undefined: unthrottled). */
  readonly controlPlaneQps?: number;
  /** Keep kubelet Events on (default off). */
  readonly events?: boolean;
  /** One-way minimum latency of the network links, µs (default {@link BENCH_NETWORK_US}; see {@link benchLatency}). */
  readonly networkUs?: number;
}

export interface ChurnOptions extends Omit<StormOptions, 'podsPerNode'> {
  /** Pod creations (and deletions) per virtual second. */
  readonly rate: number;
  /** Virtual seconds of creations. */
  readonly durationS: number;
  /** Virtual seconds a pod runs before its DELETE. */
  readonly lifetimeS: number;
}

export interface BenchPlan {
  readonly name: string;
  readonly seed: number;
  readonly placement: string;
  readonly nodes: number;
  readonly pods: number;
  readonly actors: readonly ActorPlan[];
  readonly latency: LatencyConfig;
  readonly maxVirtualUs: number;
}

export const nodeName = (i: number, n: number): string => `node-${String(i).padStart(Math.max(4, String(n - 1).length), '0')}`;

/** The pod template of behaviour class `k` (0–3) with `containers` containers. */
export function stormTemplate(k: number, containers: number): { spec: Pod['spec']; annotations: Record<string, string> } {
  const cls = k % 4;
  const annotations: Record<string, string> =
    cls === 2 ? { 'podsim.dev/on-sigterm': 'ignore' } : cls === 3 ? { 'podsim.dev/on-sigterm': 'exit:uniform(0s,2s):0' } : { 'podsim.dev/on-sigterm': 'exit:uniform(0s,5s):0' };
  const cs: Container[] = Array.from({ length: containers }, (_, i) => ({
    name: `c${i}`,
    image: PAUSE_IMAGE,
    ...(cls === 3 ? { lifecycle: { preStop: { exec: { command: ['sleep', '3'] } } } } : {}),
  }));
  return { spec: { containers: cs, terminationGracePeriodSeconds: cls === 2 ? 10 : 30 }, annotations };
}

function deployment(i: number, replicas: number, containers: number): Deployment {
  const name = `storm-${String(i).padStart(3, '0')}`;
  const labels = { app: name, bench: 'storm' };
  const { annotations, spec } = stormTemplate(i, containers);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: BENCH_NAMESPACE, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels, annotations }, spec },
    },
  } as Deployment;
}

function clusterActors(opts: Omit<StormOptions, 'podsPerNode'>, podsPerNode: number): ActorPlan[] {
  const qps = opts.controlPlaneQps !== undefined && opts.controlPlaneQps > 0 ? opts.controlPlaneQps : 0;
  const control = qps > 0 ? { kubeAPIQPS: qps, kubeAPIBurst: 2 * qps } : { kubeAPIQPS: 0 };
  const capacityPods = String(Math.max(110, Math.ceil(podsPerNode * 1.1)));
  const actors: ActorPlan[] = [
    { id: 'apiserver', module: ACTOR_MODULES.apiserver, config: {} },
    { id: 'kube-controller-manager', module: ACTOR_MODULES.controllerManager, config: control },
    { id: 'kube-scheduler', module: ACTOR_MODULES.scheduler, config: control },
  ];
  const boot = deriveStream(opts.seed, 'bench:kubelet-start');
  for (let i = 0; i < opts.nodes; i++) {
    const n = nodeName(i, opts.nodes);
    actors.push({
      id: `kubelet/${n}`,
      module: ACTOR_MODULES.kubelet,
      config: {
        nodeName: n,
        nodeIP: `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        eventsEnabled: opts.events ?? false,
        startDelayUs: boot.int(KUBELET_START_SPREAD_US),
        capacity: { cpu: '1000', memory: '4Ti', pods: capacityPods, 'ephemeral-storage': '100Gi' },
      },
    });
    actors.push({ id: `runtime/${n}`, module: ACTOR_MODULES.runtime, config: { nodeName: n, podCidr: nodePodCidr(i) } });
  }
  return actors;
}

/** The storm: `nodes × podsPerNode` pods through Deployments of ≤ 500 replicas, then all deleted at once. */
export function stormPlan(opts: StormOptions): BenchPlan {
  const pods = opts.nodes * opts.podsPerNode;
  const count = Math.max(4, Math.ceil(pods / PODS_PER_DEPLOYMENT));
  const deployments: Deployment[] = [];
  for (let i = 0; i < count; i++) {
    const replicas = Math.floor(pods / count) + (i < pods % count ? 1 : 0);
    if (replicas > 0) deployments.push(deployment(i, replicas, opts.containers));
  }
  // Creation is bounded by the kubelets' 5 QPS (a few requests per pod) and deletion by the
  // same plus the grace periods: allow generously, the driver stops the run as soon as it is done.
  const timeoutUs = LOAD_START_US + (600 + 4 * opts.podsPerNode) * US_PER_SECOND;
  const driver: StormDriverConfig = { mode: 'storm', namespace: BENCH_NAMESPACE, deployments, pods, timeoutUs, startAtUs: LOAD_START_US };
  return {
    name: 'storm',
    seed: opts.seed,
    placement: opts.placement,
    nodes: opts.nodes,
    pods,
    actors: [...clusterActors(opts, opts.podsPerNode), { id: 'driver', module: STORM_DRIVER_MODULE, config: driver }],
    latency: benchLatency(opts.networkUs),
    maxVirtualUs: timeoutUs + 60 * US_PER_SECOND,
  };
}

/** Churn: bare pods created at `rate` per virtual second for `durationS`, each deleted `lifetimeS` after it is ready. */
export function churnPlan(opts: ChurnOptions): BenchPlan {
  const pods = Math.floor(opts.rate * opts.durationS);
  const labels = { bench: 'churn' };
  const { annotations, spec } = stormTemplate(0, opts.containers);
  const template = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'churn-', namespace: BENCH_NAMESPACE, labels, annotations },
    spec,
  } as Pod;
  const durationUs = LOAD_START_US + opts.durationS * US_PER_SECOND;
  const timeoutUs = durationUs + (600 + opts.lifetimeS) * US_PER_SECOND;
  const driver: StormDriverConfig = {
    mode: 'churn',
    namespace: BENCH_NAMESPACE,
    deployments: [],
    pods,
    timeoutUs,
    startAtUs: LOAD_START_US,
    churn: { ratePerSecond: opts.rate, durationUs, lifetimeUs: opts.lifetimeS * US_PER_SECOND, template },
  };
  const perNode = Math.ceil((opts.rate * (opts.lifetimeS + 60)) / Math.max(1, opts.nodes));
  return {
    name: 'churn',
    seed: opts.seed,
    placement: opts.placement,
    nodes: opts.nodes,
    pods,
    actors: [...clusterActors(opts, perNode), { id: 'driver', module: STORM_DRIVER_MODULE, config: driver }],
    latency: benchLatency(opts.networkUs),
    maxVirtualUs: timeoutUs + 60 * US_PER_SECOND,
  };
}
