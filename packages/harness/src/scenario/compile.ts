/**
 * Scenario → run plan: the actors of the cluster (apiserver, kube-controller-manager,
 * kube-scheduler, one kubelet and one CRI runtime per node, the driver) with their plain-data
 * configs, link latencies, the engine faults, and the driver's timeline. Fault steps become
 * engine faults (crash / delay / drop / duplicate / partition, packages/api/src/faults.ts) or
 * actor config (runtime call errors, volume unmount) at their *static* virtual time: the time the
 * timeline reaches them by sleeps alone. A fault after a blocking `wait` needs an explicit `at:`.
 */
import { matchesActor, type DurationUs, type Fault, type KubeObject, type ResourceName, type Service } from '@podsim/api';
import type { LatencyConfig } from '@podsim/sim';
import { DEFAULT_EPOCH_UNIX_SECONDS, US_PER_SECOND, parseRfc3339 } from '@podsim/api';
import { parseLabelSelector } from '@podsim/api';
import { deleteOptionsFromFlags } from '../driver/kubectl.js';
import { DRIVER_ACTOR, type DriverConfig, type DriverStep, type ObjectTarget, type TaintStep, type WaitCondition } from '../driver/steps.js';
import { isClusterScoped, kubectlKind, resourceOfKind } from '../driver/driver.js';
import { INVARIANT_IDS } from '../checkers/invariants.js';
import { didYouMean, type LoadedScenario, type LoadedStep } from './load.js';
import type { ClusterSpec, ExpectSpec, FaultSpec, KubeletSettings, TrafficSourceSpec } from './schema.js';
import { ScenarioError, type ScenarioIssue } from './source.js';
import { loadScheduledFaults, type ScheduledFault } from './scheduled.js';
import { UNREALISTIC_EXPLORE_KINDS, checkExplore } from '../explore/draw.js';
import { LIVENESS } from '../explore/liveness.js';
import { admissionIssues } from './admission.js';
import { nodePodCidr } from '../nodeCidrs.js';
import { expandNodes, type ExpandedNode } from './nodePools.js';
import { clientLimits, throttleAllowanceUs, type ClientLimits } from './clientLimits.js';
import { resolveUserActors } from './userActors.js';
import type { RuntimeFlavor } from '@podsim/runtime';

/** One actor of the run: its id, the module that exports `createActor`, and its config. */
export interface ActorPlan {
  readonly id: string;
  /** Package specifier (resolved with import.meta.resolve by the engine adapter). */
  readonly module: string;
  readonly config: unknown;
}

/**
 * A CRI call failure window for the runtime of one node (fault `runtimeError`), in the runtime
 * actor's `faults` config shape (packages/runtime/src/criFaults.ts `CriFault`).
 */
export interface RuntimeCallFault {
  readonly call: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly delayUs?: number;
  readonly startUs: number;
  readonly endUs?: number;
}

export interface RunPlan {
  readonly file: string;
  /** The scenario was built in code (see {@link LoadedScenario.fromObject}). */
  readonly fromObject?: boolean;
  readonly name: string;
  readonly seed: number;
  readonly placement: string;
  readonly epochUnixSeconds: number;
  readonly namespace: string;
  readonly nodes: readonly string[];
  readonly actors: readonly ActorPlan[];
  readonly latency: LatencyConfig;
  readonly faults: readonly Fault[];
  readonly driver: DriverConfig;
  /** The API clients' rate limits (scenario/clientLimits.ts), shown in the run's header. */
  readonly clientLimits: ClientLimits;
  readonly expect: ExpectSpec | undefined;
  /** Step id → step index. */
  readonly stepIds: Readonly<Record<string, number>>;
  /** A bound the run can never legitimately pass (sum of sleeps and timeouts, plus margin). */
  readonly maxVirtualUs: number;
  readonly warnings: readonly ScenarioIssue[];
  /** Faults at absolute times: the file's `faults:` list, then those passed in (explore draws). */
  readonly scheduledFaults: readonly ScheduledFault[];
  /** With an `explore:` section: when healing begins and the liveness budget after it. */
  readonly explore?: { readonly healAfterUs: number; readonly livenessBudgetUs: number };
  /** {@link PlanOptions.disabledInvariants} (test-only). */
  readonly disabledInvariants?: readonly string[];
  /** The scenario's client traffic (issue #18), evaluated after the run (harness/src/traffic). */
  readonly traffic?: readonly TrafficSourceSpec[];
}

/** Run-time overrides from the command line. */
export interface PlanOptions {
  readonly seed?: number;
  readonly placement?: string;
  /** More faults at absolute times (the faults `podsim explore` drew for the seed). */
  readonly scheduledFaults?: readonly ScheduledFault[];
  /**
   * Test-only, for the fault mutation pass (harness/test/scenarios/faults.test.ts): fault steps and
   * scheduled faults of these kinds still appear in the timeline but take no effect (no engine
   * fault, no actor config, no Node DELETE), so a test can show that it fails without them.
   */
  readonly unwiredFaultKinds?: readonly string[];
  /**
   * Test-only, for the checker mutation pass (harness/test/checkerMutations.test.ts): these
   * invariant checkers do not judge the run (and the report does not count them as checked).
   */
  readonly disabledInvariants?: readonly string[];
}

/** Module specifiers of the actor packages (each exports `createActor`). */
export const ACTOR_MODULES = {
  apiserver: '@podsim/apiserver/actor/apiserverActor',
  controllerManager: '@podsim/controllers/actor/kubeControllerManagerActor',
  scheduler: '@podsim/controllers/actor/kubeSchedulerActor',
  kubelet: '@podsim/kubelet/actor/kubeletActor',
  runtime: '@podsim/runtime/actor/runtimeActor',
  driver: '@podsim/harness/actor/driverActor',
  kubeProxy: '@podsim/proxy/actor/kubeProxyActor',
} as const;

/** Default placement: one host thread for the whole cluster (see README "Placement"). */
export const DEFAULT_PLACEMENT = 'single';
export const DEFAULT_SEED = 1;
/** Default link latency: 100 µs minimum + up to 50 µs jitter (a LAN round trip is ~0.2–0.3 ms). */
export const DEFAULT_LINK = { minUs: 100, jitterUs: 50 } as const;
const DEFAULT_WAIT_TIMEOUT_US = 5 * 60 * US_PER_SECOND;
const DEFAULT_DELETE_TIMEOUT_US = 10 * 60 * US_PER_SECOND;
const DEFAULT_KUBELET_DOWN_US = 10 * US_PER_SECOND;
const MARGIN_US = 3600 * US_PER_SECOND;

const KIND_RESOURCE: Record<string, ResourceName> = {
  pod: 'pods',
  pods: 'pods',
  po: 'pods',
  deployment: 'deployments',
  deployments: 'deployments',
  deploy: 'deployments',
  replicaset: 'replicasets',
  replicasets: 'replicasets',
  rs: 'replicasets',
  node: 'nodes',
  nodes: 'nodes',
  no: 'nodes',
  namespace: 'namespaces',
  namespaces: 'namespaces',
  ns: 'namespaces',
  poddisruptionbudget: 'poddisruptionbudgets',
  poddisruptionbudgets: 'poddisruptionbudgets',
  pdb: 'poddisruptionbudgets',
  job: 'jobs',
  jobs: 'jobs',
  daemonset: 'daemonsets',
  daemonsets: 'daemonsets',
  ds: 'daemonsets',
  statefulset: 'statefulsets',
  statefulsets: 'statefulsets',
  sts: 'statefulsets',
  persistentvolumeclaim: 'persistentvolumeclaims',
  persistentvolumeclaims: 'persistentvolumeclaims',
  pvc: 'persistentvolumeclaims',
};

const KIND_SINGULAR: Record<string, string> = {
  pods: 'pod',
  deployments: 'deployment',
  replicasets: 'replicaset',
  nodes: 'node',
  namespaces: 'namespace',
  poddisruptionbudgets: 'poddisruptionbudget',
  jobs: 'job',
  daemonsets: 'daemonset',
  statefulsets: 'statefulset',
  persistentvolumeclaims: 'persistentvolumeclaim',
};

/** KubeletConfiguration names → the kubelet actor's config fields (packages/kubelet/src/kubeletConfig.ts). */
function kubeletConfig(settings: KubeletSettings | undefined): Record<string, unknown> {
  const s = settings ?? {};
  const out: Record<string, unknown> = {};
  if (s.kubeAPIQPS !== undefined) out.kubeAPIQPS = s.kubeAPIQPS;
  if (s.kubeAPIBurst !== undefined) out.kubeAPIBurst = s.kubeAPIBurst;
  if (s.syncFrequency !== undefined) out.syncFrequencyUs = s.syncFrequency;
  if (s.housekeepingPeriod !== undefined) out.housekeepingPeriodUs = s.housekeepingPeriod;
  if (s.plegRelistPeriod !== undefined) out.plegRelistPeriodUs = s.plegRelistPeriod;
  if (s.statusSyncPeriod !== undefined) out.statusSyncPeriodUs = s.statusSyncPeriod;
  if (s.nodeStatusUpdateFrequency !== undefined) out.nodeStatusUpdateFrequencyUs = s.nodeStatusUpdateFrequency;
  if (s.plantedBugs !== undefined) out.plantedBugs = s.plantedBugs;
  if (s.featureGates?.ProbeTerminationGracePeriod !== undefined) out.probeTerminationGracePeriod = s.featureGates.ProbeTerminationGracePeriod;
  return out;
}

/** `--node-labels` and `registerWithTaints` of a node → the kubelet actor's config fields. */
function nodeRegistration(n: ExpandedNode): Record<string, unknown> {
  return { ...(n.labels ? { nodeLabels: n.labels } : {}), ...(n.taints ? { registerWithTaints: n.taints } : {}) };
}

/** A client's `kubeAPIQPS` / `kubeAPIBurst` as the kube-controller-manager and kube-scheduler actors read them. */
function clientConfig(l: { kubeAPIQPS?: number; kubeAPIBurst?: number } | undefined): Record<string, unknown> {
  return { ...(l?.kubeAPIQPS !== undefined ? { kubeAPIQPS: l.kubeAPIQPS } : {}), ...(l?.kubeAPIBurst !== undefined ? { kubeAPIBurst: l.kubeAPIBurst } : {}) };
}

/** The kube-controller-manager config of `cluster.endpointControllers` (durations already µs). */
function endpointControllersConfig(e: ClusterSpec['endpointControllers']): Record<string, unknown> {
  if (!e) return {};
  return {
    ...(e.endpointUpdatesBatchPeriod !== undefined ? { endpointUpdatesBatchPeriodUs: e.endpointUpdatesBatchPeriod } : {}),
    ...(e.endpointSliceUpdatesBatchPeriod !== undefined ? { endpointSliceUpdatesBatchPeriodUs: e.endpointSliceUpdatesBatchPeriod } : {}),
    ...(e.maxEndpointsPerSlice !== undefined ? { maxEndpointsPerSlice: e.maxEndpointsPerSlice } : {}),
    ...(e.EndpointSliceTerminatingCondition !== undefined ? { featureGates: { EndpointSliceTerminatingCondition: e.EndpointSliceTerminatingCondition } } : {}),
  };
}

/** A node's kube-proxy config (packages/proxy/src/actor/kubeProxyActor.ts) from `cluster.kubeProxy`. */
function kubeProxyConfig(node: string, k: ClusterSpec['kubeProxy'], apiConnectionLossesUs: readonly number[] | undefined): Record<string, unknown> {
  return {
    nodeName: node,
    ...(apiConnectionLossesUs?.length ? { apiConnectionLossesUs } : {}),
    ...(k?.mode ? { mode: k.mode } : {}),
    ...(k?.minSyncPeriod !== undefined ? { minSyncPeriodUs: k.minSyncPeriod } : {}),
    ...(k?.syncPeriod !== undefined ? { syncPeriodUs: k.syncPeriod } : {}),
    ...(k?.burstSyncs !== undefined ? { burstSyncs: k.burstSyncs } : {}),
    ...(k?.syncBase !== undefined ? { syncBaseUs: k.syncBase } : {}),
    ...(k?.syncPerRule !== undefined ? { syncPerRuleUs: k.syncPerRule } : {}),
  };
}

/** Compiles a loaded scenario. Throws {@link ScenarioError} for semantic problems (bad refs, …). */
export function compileScenario(sc: LoadedScenario, opts: PlanOptions = {}): RunPlan {
  const issues: ScenarioIssue[] = [];
  const { doc, src } = sc;
  const cluster = doc.cluster;
  const namespace = cluster.namespace ?? 'default';
  const seed = opts.seed ?? cluster.seed ?? DEFAULT_SEED;
  const placement = opts.placement ?? cluster.placement ?? DEFAULT_PLACEMENT;
  const epochUnixSeconds = cluster.epoch !== undefined ? Math.floor(parseRfc3339(cluster.epoch)!) : DEFAULT_EPOCH_UNIX_SECONDS;

  // ---- nodes and actors --------------------------------------------------------------------------
  // Explicit nodes, then cluster.nodePools expanded (scenario/nodePools.ts).
  const clusterNodes = expandNodes(cluster, src, issues);
  const nodes = clusterNodes.map((n) => n.name);
  const kubeletCfg = new Map<string, Record<string, unknown>>();
  clusterNodes.forEach((n, i) => {
    // Each node gets its own IP (and, below, its own pod CIDR) as a cluster's IPAM would give it.
    const cfg: Record<string, unknown> = { nodeName: n.name, nodeIP: `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`, ...kubeletConfig(cluster.kubelet), ...kubeletConfig(n.kubelet), ...nodeRegistration(n) };
    if (n.capacity) cfg.capacity = Object.fromEntries(Object.entries(n.capacity).map(([k, v]) => [k, String(v)]));
    if (!kubeletCfg.has(n.name)) kubeletCfg.set(n.name, cfg);
  });
  const runtimeFaults = new Map<string, RuntimeCallFault[]>(nodes.map((n) => [n, []]));
  // Configs of the API clients a `disconnect` fault can hit (the kubelets' are kubeletCfg's entries),
  // with the client limits the scenario sets (cluster.controllerManager, cluster.scheduler).
  const clientCfg = new Map<string, Record<string, unknown>>([
    [
      'kube-controller-manager',
      { ...clientConfig(cluster.controllerManager), ...endpointControllersConfig(cluster.endpointControllers), ...(cluster.controllerManager?.plantedBugs ? { plantedBugs: cluster.controllerManager.plantedBugs } : {}) },
    ],
    ['kube-scheduler', clientConfig(cluster.scheduler)],
    ...nodes.map((n) => [`kubelet/${n}`, kubeletCfg.get(n)!] as [string, Record<string, unknown>]),
  ]);
  // kube-proxy runs on every node once the scenario has Services or traffic (issue #18): without a
  // Service it would write no rule, and leaving it out keeps such runs as they were.
  const withProxy = sc.manifests.some((m) => m.object.kind === 'Service') || cluster.kubeProxy !== undefined || (doc.traffic ?? []).length > 0;
  // The times each node's kube-proxy loses its apiserver connection (networkPartition).
  const proxyLosses = new Map<string, number[]>();
  const builtinIds = ['apiserver', 'kube-controller-manager', 'kube-scheduler', DRIVER_ACTOR, ...nodes.flatMap((n) => [`kubelet/${n}`, `runtime/${n}`, ...(withProxy ? [`kube-proxy/${n}`] : [])])];
  const userActors = resolveUserActors(cluster.actors ?? [], sc.file, src, builtinIds, issues);
  const actorIds = [...builtinIds, ...userActors.map((a) => a.id)];

  // ---- latency ------------------------------------------------------------------------------------
  const lat = cluster.latency;
  const latency: LatencyConfig = {
    default: lat?.default ? { minUs: lat.default.min, jitterUs: lat.default.jitter ?? 0 } : DEFAULT_LINK,
    links: (lat?.links ?? []).map((l) => ({ from: l.from, to: l.to, minUs: l.min, jitterUs: l.jitter ?? 0 })),
  };
  const checkPattern = (p: string, path: (string | number)[]) => {
    if (!actorIds.some((id) => matchesActor(p, id))) {
      issues.push(src.issue(path, `${JSON.stringify(p)} matches no actor (actors: ${actorIds.join(', ')}; patterns may end in *)${didYouMean(p, actorIds)}`));
    }
  };
  (lat?.links ?? []).forEach((l, i) => {
    checkPattern(l.from, ['cluster', 'latency', 'links', i, 'from']);
    checkPattern(l.to, ['cluster', 'latency', 'links', i, 'to']);
  });
  if (latency.default.minUs < 1 || latency.links!.some((l) => l.minUs < 1)) {
    issues.push(src.issue(['cluster', 'latency'], "every link needs a minimum latency of at least 1µs (the engine's lookahead)"));
  }

  // ---- manifests ---------------------------------------------------------------------------------
  const objects = sc.manifests.map((m) => {
    const o = structuredClone(m.object) as KubeObject;
    const resource = resourceOfKind(o.kind)!;
    if (!isClusterScoped(resource)) o.metadata = { ...o.metadata, namespace: o.metadata.namespace ?? namespace };
    return o;
  });
  // What the apiserver will refuse when a step applies them (validate and run alike).
  const admissionWarnings: ScenarioIssue[] = [];
  for (const i of admissionIssues(sc, objects)) (i.warning ? admissionWarnings : issues).push(i);
  const refOf = (o: KubeObject) => `${o.kind}/${o.metadata.name ?? o.metadata.generateName}`;
  const resolveRef = (ref: string, path: (string | number)[]): KubeObject[] => {
    if (ref === 'all') return objects;
    const hits = objects.filter((o) => (ref.includes('/') ? refOf(o) === ref : o.metadata.name === ref || o.metadata.generateName === ref));
    const skipped = sc.skipped?.find((k) => k === ref || k.endsWith(`/${ref}`));
    if (hits.length === 0 && skipped !== undefined) issues.push(src.issue(path, `${skipped} was skipped: podsim does not simulate ${skipped.split('/')[0]}`));
    else if (hits.length === 0) issues.push(src.issue(path, `no manifest ${JSON.stringify(ref)} (manifests: ${objects.map(refOf).join(', ') || 'none'})${didYouMean(ref, objects.map(refOf))}`));
    else if (hits.length > 1) issues.push(src.issue(path, `${JSON.stringify(ref)} is ambiguous (${hits.map(refOf).join(', ')}); write Kind/name`));
    return hits;
  };

  const warnings = [...sc.warnings, ...admissionWarnings];
  // ---- steps --------------------------------------------------------------------------------------
  const faults: Fault[] = [];
  const unwired = opts.unwiredFaultKinds ?? [];
  const steps: DriverStep[] = [];
  const stepIds: Record<string, number> = {};
  let cursor = 0;
  let dynamic = false;
  let bound = 0;
  sc.steps.forEach((ls: LoadedStep, index) => {
    const p = ls.path as (string | number)[];
    const spec = ls.spec as { id?: string; at?: DurationUs; expectFailure?: boolean };
    const line = src.locate(p).line;
    if (spec.id !== undefined) {
      if (stepIds[spec.id] !== undefined) issues.push(src.issue([...p, 'id'], `duplicate step id ${JSON.stringify(spec.id)}`));
      stepIds[spec.id] = index;
    }
    if (spec.at !== undefined) {
      if (!dynamic && spec.at < cursor) {
        issues.push(src.issue([...p, 'at'], `at ${spec.at / US_PER_SECOND}s is earlier than the step's start (${cursor / US_PER_SECOND}s after the preceding sleeps)`));
      }
      cursor = Math.max(cursor, spec.at);
      bound = Math.max(bound, spec.at);
    }
    const base = { index, line, ...(spec.id !== undefined ? { id: spec.id } : {}), ...(spec.at !== undefined ? { atUs: spec.at } : {}), ...(spec.expectFailure ? { expectFailure: true } : {}) };
    const s = ls.spec as Record<string, unknown>;
    switch (ls.key) {
      case 'apply':
      case 'create': {
        const refs = s[ls.key] as string | string[];
        const list = Array.isArray(refs) ? refs : [refs];
        const objs = list.flatMap((r, i) => resolveRef(r, Array.isArray(refs) ? [...p, ls.key, i] : [...p, ls.key]));
        steps.push({ ...base, kind: ls.key, objects: objs });
        break;
      }
      case 'delete': {
        const d = s.delete as {
          kind?: string;
          namespace?: string;
          name?: string;
          selector?: string;
          all?: boolean;
          gracePeriod?: number;
          force?: boolean;
          now?: boolean;
          wait?: boolean;
          timeout?: number;
          count?: number;
          cascade?: 'background' | 'foreground' | 'orphan';
          rawApi?: boolean;
        };
        const target = compileTarget(d, [...p, 'delete'], namespace, issues, ls);
        if (d.rawApi && (d.cascade !== undefined || d.gracePeriod !== undefined || d.force || d.now || d.wait || d.name === undefined)) {
          issues.push(src.issue([...p, 'delete', 'rawApi'], 'rawApi is one DELETE of one named object with no body: it takes a name and none of cascade, gracePeriod, force, now or wait'));
        }
        if (d.count !== undefined && (target.resource !== 'pods' || d.name !== undefined)) {
          issues.push(src.issue([...p, 'delete', 'count'], 'count picks among the pods a selector (or all: true) matches; it needs kind pod and no name'));
        }
        const flags = deleteOptionsFromFlags({ gracePeriod: d.gracePeriod, force: d.force, now: d.now });
        if (!flags.ok) issues.push(src.issue([...p, 'delete'], `kubectl: ${flags.error}`));
        const timeoutUs = d.timeout ?? DEFAULT_DELETE_TIMEOUT_US;
        const wait = d.wait ?? false;
        if (wait) {
          dynamic = true;
          bound += timeoutUs;
        }
        let options = flags.ok ? flags.options : {};
        if (d.cascade !== undefined) options = { ...options, propagationPolicy: d.cascade === 'background' ? 'Background' : d.cascade === 'foreground' ? 'Foreground' : 'Orphan' };
        if (d.rawApi) options = {};
        const group = target.resource === 'jobs' ? 'apis/batch/v1' : ['deployments', 'replicasets', 'daemonsets'].includes(target.resource) ? 'apis/apps/v1' : 'api/v1';
        const rawCmd = `DELETE /${group}/${target.namespace !== undefined ? `namespaces/${target.namespace}/` : ''}${target.resource}/${target.name ?? ''}`;
        const cmd = d.rawApi ? rawCmd : [
          'kubectl delete',
          KIND_SINGULAR[target.resource],
          target.name ?? (target.selector !== undefined ? `-l ${target.selector}` : '--all'),
          d.count !== undefined ? `(the oldest ${d.count})` : '',
          d.gracePeriod !== undefined ? `--grace-period=${d.gracePeriod}` : '',
          d.now ? '--now' : '',
          d.force ? '--force' : '',
          d.cascade !== undefined ? `--cascade=${d.cascade}` : '',
          `--wait=${wait}`,
        ]
          .filter(Boolean)
          .join(' ');
        steps.push({
          ...base,
          kind: 'delete',
          target,
          options,
          wait,
          timeoutUs,
          command: cmd,
          ...(flags.ok && flags.warning !== undefined ? { warning: flags.warning } : {}),
          verb: flags.ok && flags.gracePeriod === 0 ? 'force deleted' : 'deleted',
          ...(d.count !== undefined ? { count: d.count } : {}),
        });
        break;
      }
      case 'patch': {
        const pt = s.patch as { kind?: string; name: string; namespace?: string; type?: 'strategic' | 'merge' | 'json'; patch: unknown };
        const resource = KIND_RESOURCE[pt.kind ?? 'pod'];
        const patchType = pt.type ?? 'strategic';
        if (patchType === 'json' && !Array.isArray(pt.patch)) issues.push(src.issue([...p, 'patch', 'patch'], 'a json patch is a list of operations ({op, path, value})'));
        if (patchType !== 'json' && Array.isArray(pt.patch)) issues.push(src.issue([...p, 'patch', 'patch'], `a ${patchType} patch is a mapping (a list is a json patch: add type: json)`));
        steps.push({
          ...base,
          kind: 'patch',
          resource,
          ...(isClusterScoped(resource) ? {} : { namespace: pt.namespace ?? namespace }),
          name: pt.name,
          patchType,
          patch: pt.patch,
          command: `kubectl patch ${KIND_SINGULAR[resource]} ${pt.name} --type ${patchType} -p '${JSON.stringify(pt.patch)}'`,
          success: `${kubectlKind(resource)}/${pt.name} patched`,
        });
        break;
      }
      case 'setImage': {
        // kubectl v0.22.8 `set image` sends a strategic merge patch of the pod template's container.
        const si = s.setImage as { kind?: string; name: string; namespace?: string; container: string; image: string };
        const resource = KIND_RESOURCE[si.kind ?? 'deployment'];
        steps.push({
          ...base,
          kind: 'patch',
          resource,
          namespace: si.namespace ?? namespace,
          name: si.name,
          patchType: 'strategic',
          patch: { spec: { template: { spec: { containers: [{ name: si.container, image: si.image }] } } } },
          command: `kubectl set image ${KIND_SINGULAR[resource]}/${si.name} ${si.container}=${si.image}`,
          success: `${kubectlKind(resource)}/${si.name} image updated`,
        });
        break;
      }
      case 'scale': {
        const sc2 = s.scale as { kind?: string; name: string; namespace?: string; replicas: number };
        const resource = (KIND_RESOURCE[sc2.kind ?? 'deployment'] ?? 'deployments') as 'deployments' | 'replicasets' | 'statefulsets';
        steps.push({ ...base, kind: 'scale', resource, namespace: sc2.namespace ?? namespace, name: sc2.name, replicas: sc2.replicas });
        break;
      }
      case 'wait': {
        const w = s.wait as { for: WaitCondition; namespace?: string; name?: string; selector?: string; all?: boolean; count?: number; timeout?: number };
        const target = compileTarget({ ...w, kind: 'pod' }, [...p, 'wait'], namespace, issues, ls);
        const timeoutUs = w.timeout ?? DEFAULT_WAIT_TIMEOUT_US;
        dynamic = true;
        bound += timeoutUs;
        steps.push({ ...base, kind: 'wait', condition: w.for, target, count: w.count ?? (w.for === 'gone' ? 0 : 1), timeoutUs });
        break;
      }
      case 'sleep': {
        const d = s.sleep as number;
        cursor += d;
        bound += d;
        steps.push({ ...base, kind: 'sleep', durationUs: d });
        break;
      }
      case 'watch': {
        const w = s.watch as 'start' | 'stop' | { action: 'start' | 'stop'; namespace?: string; selector?: string; wide?: boolean };
        const o = typeof w === 'string' ? { action: w } : w;
        if (o.selector !== undefined) {
          const ps = parseLabelSelector(o.selector);
          if ('error' in ps) issues.push(src.issue([...p, 'watch', 'selector'], ps.error));
        }
        steps.push({
          ...base,
          kind: 'watch',
          action: o.action,
          namespace: 'namespace' in o && o.namespace !== undefined ? o.namespace : namespace,
          ...('selector' in o && o.selector !== undefined ? { selector: o.selector } : {}),
          ...('wide' in o && o.wide !== undefined ? { wide: o.wide } : {}),
        });
        break;
      }
      case 'cordon':
      case 'uncordon': {
        const node = s[ls.key] as string;
        if (!nodes.includes(node)) issues.push(src.issue([...p, ls.key], `no node ${JSON.stringify(node)} in cluster.nodes${didYouMean(node, nodes)}`));
        steps.push({ ...base, kind: ls.key, node });
        break;
      }
      case 'taint': {
        const tt = s.taint as { node: string; taint: string; overwrite?: boolean };
        if (!nodes.includes(tt.node)) issues.push(src.issue([...p, 'taint', 'node'], `no node ${JSON.stringify(tt.node)} in cluster.nodes${didYouMean(tt.node, nodes)}`));
        const remove = tt.taint.endsWith('-');
        const body = remove ? tt.taint.slice(0, -1) : tt.taint;
        const [kv, effect] = body.split(':') as [string, TaintStep['effect'] | undefined];
        const [key, value] = kv.split('=');
        if (!remove && effect === undefined) issues.push(src.issue([...p, 'taint', 'taint'], 'a taint to add needs an effect: key[=value]:NoSchedule|PreferNoSchedule|NoExecute'));
        if (remove && value !== undefined) issues.push(src.issue([...p, 'taint', 'taint'], 'a removal names key[:Effect]- without a value'));
        steps.push({ ...base, kind: 'taint', node: tt.node, key, ...(value !== undefined ? { value } : {}), ...(effect !== undefined ? { effect } : {}), remove, overwrite: tt.overwrite ?? false });
        break;
      }
      case 'evict': {
        const e = s.evict as { name: string; namespace?: string; gracePeriod?: number };
        // kubectl drain's -1 (the default) sends no grace: the pod's own terminationGracePeriodSeconds.
        const grace = e.gracePeriod !== undefined && e.gracePeriod >= 0 ? { gracePeriodSeconds: e.gracePeriod } : {};
        steps.push({ ...base, kind: 'evict', namespace: e.namespace ?? namespace, name: e.name, ...grace });
        break;
      }
      case 'drain': {
        const d = s.drain as { node: string; gracePeriod?: number; force?: boolean; ignoreDaemonsets?: boolean; deleteEmptydirData?: boolean; timeout?: number; wait?: boolean };
        if (!nodes.includes(d.node)) issues.push(src.issue([...p, 'drain', 'node'], `no node ${JSON.stringify(d.node)} in cluster.nodes${didYouMean(d.node, nodes)}`));
        if (d.timeout !== undefined && d.timeout <= 0) issues.push(src.issue([...p, 'drain', 'timeout'], 'give a timeout above 0 (kubectl\'s 0, wait forever, would never end the run)'));
        const timeoutUs = d.timeout ?? DEFAULT_DELETE_TIMEOUT_US;
        dynamic = true;
        bound += timeoutUs;
        steps.push({
          ...base,
          kind: 'drain',
          node: d.node,
          ...(d.gracePeriod !== undefined && d.gracePeriod >= 0 ? { gracePeriodSeconds: d.gracePeriod } : {}),
          force: d.force ?? false,
          ignoreDaemonsets: d.ignoreDaemonsets ?? false,
          deleteEmptydirData: d.deleteEmptydirData ?? false,
          timeoutUs,
          wait: d.wait ?? true,
        });
        break;
      }
      case 'fault': {
        const f = ls.fault!;
        if (dynamic && spec.at === undefined && f.kind !== 'nodeDeleted') {
          issues.push(
            src.issue([...p, 'fault'], `this ${f.kind} fault follows a blocking step (wait / delete with wait), so its time is not known in advance: give it an explicit at:`),
          );
        }
        const at = cursor;
        const summary = compileFault(f, at, [...p, 'fault'], { nodes, faults, kubeletCfg, runtimeFaults, clientCfg, withProxy, proxyLosses, checkPattern, issues, warnings, ls, unwired });
        steps.push({ ...base, kind: 'fault', fault: f.kind, summary, ...(f.kind === 'nodeDeleted' && !unwired.includes(f.kind) ? { deleteNode: f.node } : {}) });
        break;
      }
    }
  });

  // ---- scheduled faults (absolute times) and the explore phases ---------------------------------------
  // Each engine fault gets its scheduled fault's id, which names its random streams: removing
  // one scheduled fault (shrinking) leaves the draws of the others unchanged.
  const scheduledFaults = [...loadScheduledFaults(doc.faults, src, issues), ...(opts.scheduledFaults ?? [])];
  for (const sf of scheduledFaults) {
    const first = faults.length;
    compileFault(sf.fault, sf.atUs, sf.path ? [...sf.path] : ['faults'], { nodes, faults, kubeletCfg, runtimeFaults, clientCfg, withProxy, proxyLosses, checkPattern, issues, warnings, ls: { src }, unwired });
    for (let i = first; i < faults.length; i++) faults[i] = { ...faults[i], id: faults.length - first > 1 ? `${sf.id}/${i - first}` : sf.id };
    bound = Math.max(bound, sf.atUs);
  }
  const ex = doc.explore;
  if (ex) {
    for (const x of checkExplore(ex, { nodes, clients: [...clientCfg.keys()], actorIds })) issues.push(src.issue(x.path, x.message));
    ex.faults.forEach((e, j) => {
      if (UNREALISTIC_EXPLORE_KINDS.includes(e.kind)) {
        warnings.push(
          src.issue(['explore', 'faults', j, 'kind'], `${e.kind} loses or repeats messages inside a live watch stream, which TCP never does (the reflectors cannot recover); disconnect models a broken connection`, { warning: true }),
        );
      }
    });
    // The timeline lasts at least until the liveness budget after healAfter has passed.
    const horizon = ex.healAfter + ex.livenessBudget;
    steps.push({ index: steps.length, line: src.locate(['explore']).line, kind: 'sleep', durationUs: 0, atUs: horizon });
    bound = Math.max(bound, horizon);
  }

  // ---- traffic (issue #18) ------------------------------------------------------------------------
  const seenTrafficIds = new Map<string, number>();
  (doc.traffic ?? []).forEach((tr, i) => {
    const ns = tr.namespace ?? namespace;
    const target = objects.find((o) => o.kind === 'Service' && o.metadata.name === tr.service && o.metadata.namespace === ns) as Service | undefined;
    if (!target) {
      const svcs = objects.filter((o) => o.kind === 'Service').map((o) => o.metadata.name ?? '');
      issues.push(src.issue(['traffic', i, 'service'], `no Service ${JSON.stringify(tr.service)} in namespace ${ns} among the manifests (Services: ${svcs.join(', ') || 'none'})${didYouMean(tr.service, svcs)}`));
    } else if (target.spec?.type === 'ExternalName') {
      // kube-proxy writes no rules for an ExternalName Service: it is a DNS CNAME, not a virtual IP.
      issues.push(src.issue(['traffic', i, 'service'], `Service ${ns}/${tr.service} is type ExternalName (a DNS alias, no cluster IP): kube-proxy routes nothing to it, so traffic to it is not simulated`));
    } else if (target.spec?.clusterIP === 'None') {
      // Headless: clients resolve the pod IPs through DNS and connect to them directly; no Service rules.
      issues.push(src.issue(['traffic', i, 'service'], `Service ${ns}/${tr.service} is headless (clusterIP: None): clients reach its pods directly through DNS, not through kube-proxy, which is not simulated`));
    }
    // Sources are named by id (default traffic[i]) in results and in expect.traffic.source: one name, one source.
    const id = tr.id ?? `traffic[${i}]`;
    const first = seenTrafficIds.get(id);
    if (first !== undefined) issues.push(src.issue(['traffic', i, ...(tr.id !== undefined ? ['id'] : [])], `duplicate traffic source id ${JSON.stringify(id)} (also traffic[${first}], line ${src.locate(['traffic', first]).line})`));
    else seenTrafficIds.set(id, i);
    if (tr.timeout !== undefined && tr.timeout <= 0) issues.push(src.issue(['traffic', i, 'timeout'], 'timeout must be positive (every request would time out at once)'));
    if (tr.nodePort === true) {
      // Node-port traffic needs node ports: kube-proxy opens none for a ClusterIP Service, nor for a
      // LoadBalancer that opted out of them (ServiceLBNodePortControl).
      const type = target?.spec?.type ?? 'ClusterIP';
      if (target && type !== 'NodePort' && type !== 'LoadBalancer') issues.push(src.issue(['traffic', i, 'nodePort'], `Service ${ns}/${tr.service} is type ${type}: it has no node port (nodePort traffic needs type NodePort or LoadBalancer)`));
      // A LoadBalancer that opted out still gets the node ports it asks for (initNodePorts: "do respect specific requests").
      else if (target && type === 'LoadBalancer' && target.spec?.allocateLoadBalancerNodePorts === false && !(target.spec?.ports ?? []).some((p) => p.nodePort)) issues.push(src.issue(['traffic', i, 'nodePort'], `Service ${ns}/${tr.service} sets allocateLoadBalancerNodePorts: false: it has no node port`));
      if (tr.fromNodes !== undefined) issues.push(src.issue(['traffic', i, 'fromNodes'], 'fromNodes is for clients inside the cluster; nodePort traffic comes from outside: name the nodes it arrives at with toNodes'));
    } else if (tr.toNodes !== undefined) issues.push(src.issue(['traffic', i, 'toNodes'], 'toNodes needs nodePort: true (traffic to the ClusterIP is sent from fromNodes)'));
    // Each listed node once: a repeat would silently give that node twice the share of the clients.
    for (const key of ['toNodes', 'fromNodes'] as const) {
      (tr[key] ?? []).forEach((n, j, list) => {
        const first = list.indexOf(n);
        if (!nodes.includes(n)) issues.push(src.issue(['traffic', i, key, j], `no node ${JSON.stringify(n)} (nodes: ${nodes.join(', ')})${didYouMean(n, nodes)}`));
        else if (first < j) issues.push(src.issue(['traffic', i, key, j], `node ${JSON.stringify(n)} is listed twice (also ${key}[${first}]): name each node once (a repeat would give it twice the share of the requests)`));
      });
    }
    if (tr.since !== undefined && stepIds[tr.since] === undefined) issues.push(src.issue(['traffic', i, 'since'], `no step with id ${JSON.stringify(tr.since)}`));
    if (tr.stop !== undefined && tr.stop <= (tr.start ?? 0)) issues.push(src.issue(['traffic', i, 'stop'], 'stop must come after start'));
  });
  const trafficIds = (doc.traffic ?? []).map((tr, i) => tr.id ?? `traffic[${i}]`);
  const tes = doc.expect?.traffic;
  for (const [i, te] of (Array.isArray(tes) ? tes : tes ? [tes] : []).entries()) {
    const at: (string | number)[] = Array.isArray(tes) ? ['expect', 'traffic', i] : ['expect', 'traffic'];
    if ((doc.traffic ?? []).length === 0) issues.push(src.issue(at, 'expect.traffic needs a traffic: section'));
    else if (te.source !== undefined && !trafficIds.includes(te.source)) issues.push(src.issue([...at, 'source'], `no traffic source ${JSON.stringify(te.source)} (sources: ${[...new Set(trafficIds)].join(', ')})`));
    for (const k of ['failed', 'served', 'refused', 'reset', 'timedOut'] as const) {
      const b = te[k];
      if (b?.min !== undefined && b.max !== undefined && b.min > b.max) issues.push(src.issue([...at, k], `min ${b.min} is greater than max ${b.max}: no run can meet it`));
    }
  }

  // ---- expectations -------------------------------------------------------------------------------
  const expect = doc.expect;
  if (expect) checkExpect(expect, sc, stepIds, issues);

  if (issues.length > 0) throw new ScenarioError(issues);

  // kubectl's client rate limit stretches a step over many objects; the bound must allow it.
  const limits = clientLimits(cluster);
  bound += throttleAllowanceUs(steps, objects, limits.kubectl);
  const driver: DriverConfig = { steps, drainUs: cluster.drain ?? 0, kubectl: limits.kubectl };

  const actors = [
    { id: 'apiserver', module: ACTOR_MODULES.apiserver, config: {} },
    { id: 'kube-controller-manager', module: ACTOR_MODULES.controllerManager, config: clientCfg.get('kube-controller-manager') },
    { id: 'kube-scheduler', module: ACTOR_MODULES.scheduler, config: clientCfg.get('kube-scheduler') },
    ...nodes.flatMap((n, i) => [
      { id: `kubelet/${n}`, module: ACTOR_MODULES.kubelet, config: kubeletCfg.get(n) },
      {
        id: `runtime/${n}`,
        module: ACTOR_MODULES.runtime,
        config: { nodeName: n, podCidr: nodePodCidr(i), faults: runtimeFaults.get(n), ...runtimeSettings(clusterNodes[i], faults) },
      },
      ...(withProxy ? [{ id: `kube-proxy/${n}`, module: ACTOR_MODULES.kubeProxy, config: kubeProxyConfig(n, cluster.kubeProxy, proxyLosses.get(n)) }] : []),
    ]),
    {
      id: DRIVER_ACTOR,
      module: ACTOR_MODULES.driver,
      config: driver,
    },
    ...userActors,
  ];
  return {
    file: sc.file,
    ...(sc.fromObject ? { fromObject: true } : {}),
    name: doc.name ?? sc.file,
    seed,
    placement,
    epochUnixSeconds,
    namespace,
    nodes,
    actors,
    latency,
    faults,
    driver,
    clientLimits: limits,
    expect,
    stepIds,
    maxVirtualUs: bound + (cluster.drain ?? 0) + MARGIN_US,
    warnings,
    scheduledFaults,
    ...(ex ? { explore: { healAfterUs: ex.healAfter, livenessBudgetUs: ex.livenessBudget } } : {}),
    ...(opts.disabledInvariants?.length ? { disabledInvariants: checkedInvariantIds(opts.disabledInvariants) } : {}),
    ...(doc.traffic?.length ? { traffic: doc.traffic } : {}),
  };
}

/** The ids of a test's `disabledInvariants`, each a known checker (a typo would disable nothing and pass). */
function checkedInvariantIds(ids: readonly string[]): readonly string[] {
  for (const id of ids) if (!INVARIANT_IDS.includes(id)) throw new Error(`disabledInvariants: unknown invariant ${JSON.stringify(id)} (known: ${INVARIANT_IDS.join(', ')})`);
  return ids;
}

function compileTarget(
  d: { kind?: string; namespace?: string; name?: string; selector?: string; all?: boolean },
  path: (string | number)[],
  namespace: string,
  issues: ScenarioIssue[],
  ls: LoadedStep,
): ObjectTarget {
  const resource = KIND_RESOURCE[d.kind ?? 'pod'];
  const chosen = [d.name !== undefined, d.selector !== undefined, d.all === true].filter(Boolean).length;
  if (chosen !== 1) issues.push(ls.src.issue(path, 'give exactly one of name, selector or all: true'));
  if (d.selector !== undefined) {
    const ps = parseLabelSelector(d.selector);
    if ('error' in ps) issues.push(ls.src.issue([...path, 'selector'], ps.error));
  }
  return {
    resource,
    ...(isClusterScoped(resource) ? {} : { namespace: d.namespace ?? namespace }),
    ...(d.name !== undefined ? { name: d.name } : {}),
    ...(d.selector !== undefined ? { selector: d.selector } : {}),
    ...(d.all ? { all: true } : {}),
  };
}

/**
 * A node's runtime settings: its flavour (`cluster.nodes[].runtime.flavor`) and, for the
 * `containerd` flavour, the times its kubelet process dies (every crash fault of
 * `kubelet/<node>`), when a StopContainer waiting for that kubelet is cancelled.
 */
function runtimeSettings(n: ExpandedNode | undefined, faults: readonly Fault[]): { flavor?: RuntimeFlavor; callerCrashesUs?: number[] } {
  if (!n) return {};
  const kubelet = `kubelet/${n.name}`;
  const crashes = faults.filter((f): f is Extract<Fault, { kind: 'crash' }> => f.kind === 'crash' && f.actor === kubelet).map((f) => f.atUs);
  return { ...(n.runtime?.flavor ? { flavor: n.runtime.flavor } : {}), ...(crashes.length > 0 ? { callerCrashesUs: crashes } : {}) };
}

interface FaultCtx {
  readonly nodes: readonly string[];
  readonly faults: Fault[];
  readonly kubeletCfg: Map<string, Record<string, unknown>>;
  readonly runtimeFaults: Map<string, RuntimeCallFault[]>;
  /** Configs of the API clients (kubelets, kube-controller-manager, kube-scheduler) by actor id. */
  readonly clientCfg: Map<string, Record<string, unknown>>;
  /** Every node runs a kube-proxy (the scenario has Services or traffic). */
  readonly withProxy: boolean;
  /** Per node, the times its kube-proxy loses its apiserver connection (filled by networkPartition). */
  readonly proxyLosses: Map<string, number[]>;
  readonly checkPattern: (p: string, path: (string | number)[]) => void;
  readonly issues: ScenarioIssue[];
  readonly warnings: ScenarioIssue[];
  readonly ls: Pick<LoadedStep, 'src'>;
  /** {@link PlanOptions.unwiredFaultKinds}. */
  readonly unwired: readonly string[];
}

/**
 * Adds the engine faults / actor config for one fault step; returns a one-line summary. A kind in
 * `c.unwired` is checked and summarised as usual but wired into scratch copies nothing reads.
 */
function compileFault(f: FaultSpec, at: number, path: (string | number)[], c: FaultCtx): string {
  if (!c.unwired.includes(f.kind)) return wireFault(f, at, path, c);
  const copy = (m: Map<string, Record<string, unknown>>) => new Map([...m].map(([k, v]) => [k, structuredClone(v)]));
  return wireFault(f, at, path, { ...c, faults: [], kubeletCfg: copy(c.kubeletCfg), clientCfg: copy(c.clientCfg), proxyLosses: new Map(), runtimeFaults: new Map(c.nodes.map((n) => [n, []])) });
}

function wireFault(f: FaultSpec, at: number, path: (string | number)[], c: FaultCtx): string {
  const end = (d: number | undefined) => (d === undefined ? {} : { endUs: at + d });
  if ('node' in f && !c.nodes.includes(f.node)) {
    c.issues.push(c.ls.src.issue([...path, 'node'], `no node ${JSON.stringify(f.node)} in cluster.nodes${didYouMean(f.node, c.nodes)}`));
    return f.kind;
  }
  // Seconds as in the file's own units (the summary is part of the digested trace); an open-ended
  // fault lasts `until the end`, a bounded one `for 20s`.
  const secs = (us: number) => `${us / US_PER_SECOND}s`;
  const lasting = (us: number | undefined) => (us === undefined ? 'until the end' : `for ${secs(us)}`);
  switch (f.kind) {
    case 'kubeletRestart': {
      const down = f.downFor ?? DEFAULT_KUBELET_DOWN_US;
      c.faults.push({ kind: 'crash', actor: `kubelet/${f.node}`, atUs: at, restartAfterUs: down });
      return `kubelet/${f.node} restarts (down ${secs(down)})`;
    }
    case 'nodeDown': {
      // Power off: the kubelet, the runtime (with every container and sandbox) and the node's
      // kube-proxy stop; kube-proxy last, so the other two keep their fault ids (random streams).
      for (const a of [`kubelet/${f.node}`, `runtime/${f.node}`, ...(c.withProxy ? [`kube-proxy/${f.node}`] : [])]) {
        c.faults.push({ kind: 'crash', actor: a, atUs: at, ...(f.for !== undefined ? { restartAfterUs: f.for } : {}) });
      }
      return `node ${f.node} down ${lasting(f.for)}`;
    }
    case 'kubeletDown': {
      c.faults.push({ kind: 'crash', actor: `kubelet/${f.node}`, atUs: at, ...(f.for !== undefined ? { restartAfterUs: f.for } : {}) });
      return `kubelet/${f.node} down ${lasting(f.for)} (containers keep running)`;
    }
    case 'networkPartition': {
      const id = `kubelet/${f.node}`;
      c.faults.push({ kind: 'partition', a: id, b: 'apiserver', startUs: at, ...end(f.for) });
      const cfg = c.clientCfg.get(id)!;
      cfg.apiConnectionLossesUs = [...((cfg.apiConnectionLossesUs as number[] | undefined) ?? []), at];
      // The node's kube-proxy is cut off too: its watches end and its rules stay as last synced.
      // Only the control plane is out of reach: pods on the node keep serving other nodes' clients.
      if (c.withProxy) {
        c.faults.push({ kind: 'partition', a: `kube-proxy/${f.node}`, b: 'apiserver', startUs: at, ...end(f.for) });
        c.proxyLosses.set(f.node, [...(c.proxyLosses.get(f.node) ?? []), at]);
      }
      return `node ${f.node} ⇹ control plane partitioned ${lasting(f.for)} (kubelet keeps running)`;
    }
    case 'runtimeError': {
      c.runtimeFaults.get(f.node)!.push({
        call: f.call,
        error: { code: f.code ?? 'Unknown', message: f.message ?? `injected ${f.call} failure` },
        startUs: at,
        ...end(f.for),
      });
      return `runtime/${f.node} fails ${f.call} (${f.code ?? 'Unknown'}) ${lasting(f.for)}`;
    }
    case 'runtimeDelay': {
      c.runtimeFaults.get(f.node)!.push({ call: f.call, delayUs: f.delay, startUs: at, ...end(f.for) });
      return `runtime/${f.node} answers ${f.call} ${secs(f.delay)} late ${lasting(f.for)}`;
    }
    case 'slowUnmount': {
      const cfg = c.kubeletCfg.get(f.node)!;
      const model = {
        ...(f.attempt !== undefined ? { unmountUs: f.attempt } : {}),
        ...(f.for !== undefined ? { failUntilUs: f.for } : {}),
        ...(f.error !== undefined ? { error: f.error } : {}),
      };
      if (f.volume === undefined) cfg.volumeUnmount = model;
      else cfg.volumeUnmountByName = { ...(cfg.volumeUnmountByName as object | undefined), [f.volume]: model };
      return `kubelet/${f.node} unmount of ${f.volume ?? 'every volume'} fails ${lasting(f.for)}`;
    }
    case 'delay':
      c.checkPattern(f.from, [...path, 'from']);
      c.checkPattern(f.to, [...path, 'to']);
      c.faults.push({ kind: 'delay', from: f.from, to: f.to, delayUs: f.delay, startUs: at, ...end(f.for) });
      return `messages ${f.from} → ${f.to} delayed ${secs(f.delay)} ${lasting(f.for)}`;
    case 'drop':
      c.checkPattern(f.from, [...path, 'from']);
      c.checkPattern(f.to, [...path, 'to']);
      c.faults.push({ kind: 'drop', from: f.from, to: f.to, probability: f.probability ?? 1, startUs: at, ...end(f.for) });
      return `messages ${f.from} → ${f.to} dropped (p=${f.probability ?? 1}) ${lasting(f.for)}`;
    case 'duplicate':
      c.checkPattern(f.from, [...path, 'from']);
      c.checkPattern(f.to, [...path, 'to']);
      if (f.to === 'apiserver') {
        c.warnings.push(
          c.ls.src.issue([...path, 'to'], 'a duplicate fault repeats messages within a stream only (watch events, replies); every message to the apiserver is a request, so this fault repeats nothing', { warning: true }),
        );
      }
      // Within streams only (issue #27 item 7): a duplicated watch request opened a second stream
      // that replayed events and re-added a forgotten pod worker.
      c.faults.push({ kind: 'duplicate', from: f.from, to: f.to, probability: f.probability ?? 1, delayUs: f.delay ?? 0, requests: false, startUs: at, ...end(f.for) });
      return `messages ${f.from} → ${f.to} duplicated (p=${f.probability ?? 1}) ${lasting(f.for)}`;
    case 'partition':
      c.checkPattern(f.a, [...path, 'a']);
      c.checkPattern(f.b, [...path, 'b']);
      c.faults.push({ kind: 'partition', a: f.a, b: f.b, startUs: at, ...end(f.for) });
      return `partition ${f.a} ⇹ ${f.b} ${lasting(f.for)}`;
    case 'nodeDeleted':
      return `Node ${f.node} deleted`;
    case 'disconnect': {
      const clients = [...c.clientCfg.keys()].filter((id) => matchesActor(f.client, id));
      if (clients.length === 0) {
        c.issues.push(c.ls.src.issue([...path, 'client'], `${JSON.stringify(f.client)} matches no API client (${[...c.clientCfg.keys()].join(', ')})`));
        return f.kind;
      }
      for (const id of clients) {
        c.faults.push({ kind: 'partition', a: id, b: 'apiserver', startUs: at, ...end(f.for) });
        const cfg = c.clientCfg.get(id)!;
        cfg.apiConnectionLossesUs = [...((cfg.apiConnectionLossesUs as number[] | undefined) ?? []), at];
      }
      return `connection ${f.client} ⇹ apiserver broken ${lasting(f.for)} (watches end and are re-established)`;
    }
  }
}

/** The explicit cluster.nodes names (undefined when node pools are used: those are checked at run time). */
function clusterNodeNames(sc: LoadedScenario): string[] | undefined {
  const c = sc.doc.cluster as { nodes?: { name: string }[]; nodePools?: unknown[] };
  if (c.nodePools && c.nodePools.length > 0) return undefined;
  return (c.nodes ?? []).map((n) => n.name);
}

function checkExpect(e: ExpectSpec, sc: LoadedScenario, stepIds: Record<string, number>, issues: ScenarioIssue[]): void {
  const src = sc.src;
  const aliases = e.pods ?? [];
  aliases.forEach((a, i) => {
    if (aliases.indexOf(a) !== i) issues.push(src.issue(['expect', 'pods', i], `duplicate alias ${JSON.stringify(a)}`));
  });
  const known = (ref: string, path: (string | number)[]) => {
    if (!aliases.includes(ref)) issues.push(src.issue(path, `unknown pod ${JSON.stringify(ref)}: declare it in expect.pods (aliases bind in order of pod creation)${didYouMean(ref, aliases)}`));
  };
  const watches = e.watch === undefined ? [] : Array.isArray(e.watch) ? e.watch : [e.watch];
  watches.forEach((w, k) => {
    const base = Array.isArray(e.watch) ? ['expect', 'watch', k] : ['expect', 'watch'];
    if (w.pod !== undefined) known(w.pod, [...base, 'pod']);
    w.rows.forEach((r, i) => {
      const who = r.trim().split(/\s+/)[0];
      known(who, [...base, 'rows', i]);
      if (w.pod !== undefined && who !== w.pod) issues.push(src.issue([...base, 'rows', i], `row of ${who} in an expectation about ${w.pod}'s rows only`));
    });
  });
  const jobNames = sc.manifests.filter((m) => m.object.kind === 'Job').map((m) => m.object.metadata?.name ?? '');
  e.jobs?.forEach((j, i) => {
    // A Job comes only from the file's manifests (no CronJob is simulated): a name that is not
    // one of them can never be judged, so it is refused here rather than failed after the run.
    if (jobNames.length === 0) issues.push(src.issue(['expect', 'jobs', i], 'no Job among the manifests to judge'));
    else if (j.name !== undefined && !jobNames.includes(j.name)) issues.push(src.issue(['expect', 'jobs', i, 'name'], `no Job ${JSON.stringify(j.name)} among the manifests (Jobs: ${jobNames.join(', ')})${didYouMean(j.name, jobNames)}`));
    if (j.since !== undefined && stepIds[j.since] === undefined) issues.push(src.issue(['expect', 'jobs', i, 'since'], `no step with id ${JSON.stringify(j.since)}${didYouMean(j.since, Object.keys(stepIds))}`));
    if (j.reason !== undefined && j.event === 'gone') issues.push(src.issue(['expect', 'jobs', i, 'reason'], 'reason goes with event Complete or Failed, not gone'));
  });
  const stepRef = (since: string | undefined, path: (string | number)[]) => {
    if (since !== undefined && since !== 'start' && stepIds[since] === undefined) issues.push(src.issue(path, `no step with id ${JSON.stringify(since)}${didYouMean(since, Object.keys(stepIds))}`));
  };
  const clusterNodes = clusterNodeNames(sc);
  e.nodes?.forEach((n, i) => {
    if (clusterNodes && !clusterNodes.includes(n.node)) issues.push(src.issue(['expect', 'nodes', i, 'node'], `no node ${JSON.stringify(n.node)} in cluster.nodes${didYouMean(n.node, clusterNodes)}`));
    if (n.ready === undefined && n.taints === undefined) issues.push(src.issue(['expect', 'nodes', i], 'give ready: and/or taints: (what to check)'));
    stepRef(n.since, ['expect', 'nodes', i, 'since']);
  });
  e.podReady?.forEach((r, i) => {
    known(r.pod, ['expect', 'podReady', i, 'pod']);
    stepRef(r.since, ['expect', 'podReady', i, 'since']);
  });
  e.replicaSets?.forEach((r, i) => {
    if (r.since !== undefined && stepIds[r.since] === undefined) issues.push(src.issue(['expect', 'replicaSets', i, 'since'], `no step with id ${JSON.stringify(r.since)}${didYouMean(r.since, Object.keys(stepIds))}`));
  });
  e.timings?.forEach((t, i) => {
    if (t.pod !== '*') known(t.pod, ['expect', 'timings', i, 'pod']);
    if (t.of !== undefined && t.pod !== '*') issues.push(src.issue(['expect', 'timings', i, 'of'], 'of: first | last | each goes with pod: "*" (every pod)'));
    if (t.since !== undefined && t.after !== undefined) issues.push(src.issue(['expect', 'timings', i], 'give since: (a step) or after: (an event of the same pod), not both'));
    if (t.after !== undefined && t.after === t.event) issues.push(src.issue(['expect', 'timings', i, 'after'], `an event cannot be measured after itself (${t.event})`));
    if (t.since !== undefined && t.since !== 'start' && stepIds[t.since] === undefined) {
      issues.push(src.issue(['expect', 'timings', i, 'since'], `no step with id ${JSON.stringify(t.since)}${didYouMean(t.since, Object.keys(stepIds))}`));
    }
    if ((t.within === undefined) === (t.at === undefined)) issues.push(src.issue(['expect', 'timings', i], 'give exactly one of within: [min, max] or at: (with tolerance:)'));
    if (t.within && t.within[0] > t.within[1]) issues.push(src.issue(['expect', 'timings', i, 'within'], 'the window ends before it starts'));
  });
  e.exitCodes?.forEach((x, i) => known(x.pod, ['expect', 'exitCodes', i, 'pod']));
  e.grace?.forEach((g, i) => {
    known(g.pod, ['expect', 'grace', i, 'pod']);
    if (g.request === undefined && g.deletionGracePeriodSeconds === undefined && g.killPod === undefined && g.stopContainer === undefined) {
      issues.push(src.issue(['expect', 'grace', i], 'give at least one of request, deletionGracePeriodSeconds, killPod, stopContainer'));
    }
  });
  e.output?.forEach((o, i) => {
    if (stepIds[o.step] === undefined) issues.push(src.issue(['expect', 'output', i, 'step'], `no step with id ${JSON.stringify(o.step)}${didYouMean(o.step, Object.keys(stepIds))}`));
  });
  if (e.counts && Object.keys(e.counts).length === 0) issues.push(src.issue(['expect', 'counts'], 'give at least one of maxPods, podsAtEnd, runningAtEnd'));
  e.signals?.forEach((x, i) => known(x.pod, ['expect', 'signals', i, 'pod']));
  if (e.invariants !== undefined && e.invariants !== 'clean') {
    // `liveness` (explore/liveness.ts) is judged only in a scenario with an explore: section.
    const ids = [...INVARIANT_IDS, LIVENESS];
    e.invariants.allow.forEach((id, i) => {
      if (!ids.includes(id)) issues.push(src.issue(['expect', 'invariants', 'allow', i], `unknown invariant ${JSON.stringify(id)} (known: ${ids.join(', ')})`));
      else if (id === LIVENESS && sc.doc.explore === undefined) {
        issues.push(src.issue(['expect', 'invariants', 'allow', i], `${LIVENESS} is checked only in a scenario with an explore: section (healAfter, livenessBudget); add one or drop it from allow`));
      }
    });
  }
}
