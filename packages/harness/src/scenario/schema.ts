/**
 * The scenario file's schema (zod 4). A scenario is a YAML stream: one document with
 * `kind: Scenario` (cluster, steps, expect) and any number of ordinary Kubernetes manifests
 * (apps/v1 Deployment, ReplicaSet and DaemonSet, batch/v1 Job, v1 Pod and Node, or a `kind: List`), exactly as users keep
 * them. Durations are strings such as `30s` / `2m46s` / `42h` or numbers of seconds; they
 * become virtual µs here. Field names of kubelet settings are the KubeletConfiguration v1beta1
 * names (kubelet v0.22.8 `config/v1beta1/types.go`).
 */
import * as z from 'zod';
import { CONTROLLER_PLANTED_BUGS } from '@podsim/controllers/plantedBugs';
import { DURATION_EXPECTED, durationError, parseDuration } from '../duration.js';

/** A duration field: `30s`, `2m46s`, `42h`, `500ms`, or a number of seconds → virtual µs. */
export const zDuration = z
  .union([z.number(), z.string()], { error: DURATION_EXPECTED })
  .superRefine((v, ctx) => {
    if (parseDuration(v) === undefined) ctx.addIssue({ code: 'custom', message: durationError(v) });
  })
  .transform((v) => parseDuration(v)!);

const zName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: 'expected a DNS-1123 name (lowercase letters, digits, - and .)' });

const zPlacement = z.string().regex(/^(single|per-actor|(shards|nodes):[1-9]\d*)$/, { message: 'expected single, per-actor, shards:N or nodes:N' });

const zLink = z.strictObject({ min: zDuration, jitter: zDuration.optional() });

/** KubeletConfiguration (v1beta1) settings podsim honours, plus podsim's own period knobs. */
export const zKubeletSettings = z.strictObject({
  kubeAPIQPS: z.number().positive().optional(),
  kubeAPIBurst: z.number().int().positive().optional(),
  syncFrequency: zDuration.optional(),
  housekeepingPeriod: zDuration.optional(),
  plegRelistPeriod: zDuration.optional(),
  statusSyncPeriod: zDuration.optional(),
  nodeStatusUpdateFrequency: zDuration.optional(),
  /** KubeletConfiguration `featureGates`: only the gates podsim models. */
  featureGates: z.strictObject({ ProbeTerminationGracePeriod: z.boolean().optional() }).optional(),
  /**
   * Test-only: bugs planted in the kubelet to check that `podsim explore` and the checkers find
   * them (`skipUidPrecondition`, `skipPreStopWait`, `skipReclaimCheck`: packages/kubelet/src/kubeletConfig.ts).
   */
  plantedBugs: z.array(z.enum(['skipUidPrecondition', 'skipPreStopWait', 'skipReclaimCheck'])).optional(),
});

/** A label key (`[prefix/]name`, as metav1 validation's IsQualifiedName) and value (≤ 63 characters). */
const zLabels = z.record(
  z.string().regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, { message: 'expected a label key such as tier or example.com/tier' }),
  z.string().regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/, { message: 'expected a label value: at most 63 letters, digits, -, _ or .' }),
);

/** A Node taint as KubeletConfiguration `registerWithTaints` takes it. */
const zTaint = z.strictObject({
  key: z.string().regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, { message: 'expected a taint key such as dedicated or example.com/dedicated' }),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
});

/** What a node and a node pool share: capacity, kubelet settings, the labels and taints it registers with. */
const zNodeShape = {
  capacity: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  kubelet: zKubeletSettings.optional(),
  labels: zLabels.optional(),
  taints: z.array(zTaint).optional(),
  /**
   * The node's CRI runtime (packages/runtime `RuntimeFlavor`): `containerd` (default; containerd
   * 1.5 — a StopContainer whose kubelet died stops waiting, no SIGKILL at its deadline) or
   * `detached-stop` (the stop's SIGKILL comes at its deadline even after the kubelet died).
   */
  runtime: z.strictObject({ flavor: z.enum(['containerd', 'detached-stop']).optional() }).optional(),
};

export const zNode = z.strictObject({ name: zName, ...zNodeShape });

/** `count` nodes named `<namePrefix>1 … <namePrefix><count>` (scenario/nodePools.ts). */
export const zNodePool = z.strictObject({
  count: z.number().int().min(1).max(5000, { message: 'a node pool has at most 5000 nodes (the largest cluster Kubernetes supports)' }),
  namePrefix: z.string().regex(/^[a-z0-9]([-a-z0-9.]*)?$/, { message: 'expected the start of a DNS-1123 name, such as node- or pool-a-' }),
  ...zNodeShape,
});

/** An API client's token bucket (client-go `flowcontrol.NewTokenBucketRateLimiter`); `kubeAPIQPS: 0` turns it off. */
const zClientLimits = z.strictObject({ kubeAPIQPS: z.number().min(0).optional(), kubeAPIBurst: z.number().int().positive().optional() });

/**
 * An actor of the user's own in the cluster (`cluster.actors`): an id, the module that exports
 * `createActor(id, config)` (a path relative to the scenario file, or a package name resolved
 * from it), and its plain-data config. compile.ts resolves the module and refuses clashes with
 * podsim's own actor ids.
 */
export const zUserActor = z.strictObject({
  id: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: 'expected an actor id: a DNS-1123 name such as my-operator' }),
  module: z.string().min(1, { message: 'expected the module that exports createActor, e.g. ./dist/operator.js' }),
  config: z.unknown().optional(),
});

export const zCluster = z.strictObject({
  seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
  epoch: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, { message: 'expected an RFC 3339 time such as 2025-01-01T00:00:00Z' })
    .optional(),
  placement: zPlacement.optional(),
  namespace: zName.optional(),
  /** Explicit nodes; with `nodePools`, at least one node in all (compile checks). */
  nodes: z.array(zNode).optional(),
  nodePools: z.array(zNodePool).optional(),
  kubelet: zKubeletSettings.optional(),
  /**
   * kube-controller-manager `--kube-api-qps` / `--kube-api-burst` (20 / 30, per controller
   * client). Test-only `plantedBugs`: bugs planted in the controllers to check that the
   * node-lifecycle checkers catch them (packages/controllers/src/plantedBugs.ts).
   */
  controllerManager: zClientLimits
    .extend({ plantedBugs: z.array(z.enum(CONTROLLER_PLANTED_BUGS)).optional() })
    .optional(),
  /** KubeSchedulerConfiguration `clientConnection` qps / burst (50 / 100). */
  scheduler: zClientLimits.optional(),
  /** The client of the steps that act as kubectl: client-go's defaults, QPS 5 / burst 10 (kubectl v0.22.8 sets neither). */
  kubectl: zClientLimits.optional(),
  /** kube-proxy on every node (issue #18): KubeProxyConfiguration's mode and sync periods, plus podsim's sync-duration model. */
  kubeProxy: z
    .strictObject({
      mode: z.enum(['iptables', 'ipvs']).optional(),
      /** `--iptables-min-sync-period` / `--ipvs-min-sync-period` (1s / 0). */
      minSyncPeriod: zDuration.optional(),
      /** The BoundedFrequencyRunner's maxInterval: 1h (iptables) / `--ipvs-sync-period` 30s. */
      syncPeriod: zDuration.optional(),
      burstSyncs: z.number().int().min(1).optional(),
      /** One sync takes syncBase + syncPerRule × rules (default 20ms + 10µs iptables, 5ms + 1µs IPVS). */
      syncBase: zDuration.optional(),
      syncPerRule: zDuration.optional(),
    })
    .optional(),
  /** kube-controller-manager endpoint controllers' flags (issue #18). */
  endpointControllers: z
    .strictObject({
      endpointUpdatesBatchPeriod: zDuration.optional(),
      endpointSliceUpdatesBatchPeriod: zDuration.optional(),
      maxEndpointsPerSlice: z.number().int().min(1).max(1000).optional(),
      EndpointSliceTerminatingCondition: z.boolean().optional(),
    })
    .optional(),
  latency: z
    .strictObject({
      default: zLink.optional(),
      links: z.array(z.strictObject({ from: z.string(), to: z.string(), min: zDuration, jitter: zDuration.optional() })).optional(),
    })
    .optional(),
  /** Extra virtual time the run continues after the last step (default 0). */
  drain: zDuration.optional(),
  /** Actors of the user's own (an operator, a controller) run beside podsim's, talking to the apiserver. */
  actors: z.array(zUserActor).optional(),
}).check((ctx) => {
  // Here rather than only in compile (nodePools.ts says it too): so that it is reported in the
  // same pass as the other problems of the file.
  const c = ctx.value;
  if ((c.nodes?.length ?? 0) === 0 && (c.nodePools?.length ?? 0) === 0) {
    ctx.issues.push({ code: 'custom', input: c, path: [c.nodePools ? 'nodePools' : 'nodes'], message: 'a cluster needs at least one node (cluster.nodes or cluster.nodePools)' });
  }
});

// ---- steps ------------------------------------------------------------------------------------

/** Fields every step may carry: `id` (for expectations), `at:` (not before), `expectFailure` (the step must fail, as kubectl exiting non-zero). */
const zStepCommon = { id: z.string().min(1).optional(), at: zDuration.optional(), expectFailure: z.boolean().optional() };

const zTargetFields = {
  namespace: zName.optional(),
  name: z.string().min(1).optional(),
  selector: z.string().optional(),
  all: z.boolean().optional(),
};

const zKind = z.enum(['pod', 'pods', 'po', 'deployment', 'deployments', 'deploy', 'replicaset', 'replicasets', 'rs', 'node', 'nodes', 'no', 'namespace', 'namespaces', 'ns', 'poddisruptionbudget', 'poddisruptionbudgets', 'pdb', 'job', 'jobs', 'daemonset', 'daemonsets', 'ds', 'statefulset', 'statefulsets', 'sts', 'persistentvolumeclaim', 'persistentvolumeclaims', 'pvc'], {
  error: 'expected a kind: pod, deployment, replicaset, node, namespace, poddisruptionbudget, job, daemonset, statefulset or persistentvolumeclaim',
});

const zRef = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], { error: 'expected `all`, a manifest reference (Kind/name or name) or a list of them' });

export const zStepSchemas = {
  apply: z.strictObject({ ...zStepCommon, apply: zRef }),
  create: z.strictObject({ ...zStepCommon, create: zRef }),
  delete: z.strictObject({
    ...zStepCommon,
    delete: z.strictObject({
      kind: zKind.optional(),
      ...zTargetFields,
      gracePeriod: z.number().int().min(-1).optional(),
      force: z.boolean().optional(),
      now: z.boolean().optional(),
      wait: z.boolean().optional(),
      timeout: zDuration.optional(),
      /** Pods by selector or all: delete only this many live ones, oldest first. */
      count: z.number().int().min(1).optional(),
      /** kubectl `--cascade` (default background): the propagationPolicy kubectl sends. */
      cascade: z.enum(['background', 'foreground', 'orphan']).optional(),
      /**
       * A raw API DELETE as client libraries send it (no body, so no propagationPolicy): the
       * resource's default garbage-collection policy applies (batch/v1 Jobs: orphan).
       */
      rawApi: z.boolean().optional(),
    }),
  }),
  scale: z.strictObject({
    ...zStepCommon,
    scale: z.strictObject({
      kind: z.enum(['deployment', 'deployments', 'deploy', 'replicaset', 'replicasets', 'rs', 'statefulset', 'statefulsets', 'sts']).optional(),
      name: z.string().min(1),
      namespace: zName.optional(),
      replicas: z.number().int().min(0),
    }),
  }),
  wait: z.strictObject({
    ...zStepCommon,
    wait: z.strictObject({
      for: z.enum(['exists', 'running', 'ready', 'terminating', 'gone']),
      ...zTargetFields,
      count: z.number().int().min(1).optional(),
      timeout: zDuration.optional(),
    }),
  }),
  sleep: z.strictObject({ ...zStepCommon, sleep: zDuration }),
  watch: z.strictObject({
    ...zStepCommon,
    watch: z.union(
      [
        z.enum(['start', 'stop']),
        z.strictObject({
          action: z.enum(['start', 'stop']),
          namespace: zName.optional(),
          selector: z.string().optional(),
          wide: z.boolean().optional(),
        }),
      ],
      { error: 'expected start, stop or {action, namespace?, selector?, wide?}' },
    ),
  }),
  fault: z.strictObject({ ...zStepCommon, fault: z.looseObject({ kind: z.string() }) }),
  /** `kubectl patch <kind> <name> --type <type> -p <patch>`. */
  patch: z.strictObject({
    ...zStepCommon,
    patch: z.strictObject({
      kind: zKind.optional(),
      name: z.string().min(1),
      namespace: zName.optional(),
      type: z.enum(['strategic', 'merge', 'json']).optional(),
      patch: z.union([z.looseObject({}), z.array(z.looseObject({}))], { error: 'expected a patch: a mapping (strategic / merge) or a list of JSON patch operations' }),
    }),
  }),
  /** `kubectl set image <kind>/<name> <container>=<image>` (a strategic merge patch of the pod template). */
  setImage: z.strictObject({
    ...zStepCommon,
    setImage: z.strictObject({
      kind: z.enum(['deployment', 'deployments', 'deploy', 'replicaset', 'replicasets', 'rs', 'daemonset', 'daemonsets', 'ds', 'statefulset', 'statefulsets', 'sts']).optional(),
      name: z.string().min(1),
      namespace: zName.optional(),
      container: zName,
      image: z.string().min(1),
    }),
  }),
  /**
   * `kubectl taint nodes NODE key[=value]:Effect` (add; `overwrite: true` to change a value) or
   * `key[:Effect]-` (remove).
   */
  taint: z.strictObject({
    ...zStepCommon,
    taint: z.strictObject({
      node: zName,
      taint: z.string().regex(/^[A-Za-z0-9][-A-Za-z0-9_./]*(=[-A-Za-z0-9_.]*)?(:(NoSchedule|PreferNoSchedule|NoExecute))?-?$/, {
        message: 'expected key[=value]:Effect (add) or key[:Effect]- (remove), Effect one of NoSchedule, PreferNoSchedule, NoExecute',
      }),
      overwrite: z.boolean().optional(),
    }),
  }),
  /** `kubectl cordon NODE` / `kubectl uncordon NODE`. */
  cordon: z.strictObject({ ...zStepCommon, cordon: zName }),
  uncordon: z.strictObject({ ...zStepCommon, uncordon: zName }),
  /** One POST of pods/{name}/eviction. */
  evict: z.strictObject({
    ...zStepCommon,
    evict: z.strictObject({ name: z.string().min(1), namespace: zName.optional(), gracePeriod: z.number().int().min(-1).optional() }),
  }),
  /** `kubectl drain NODE` with its flags. */
  drain: z.strictObject({
    ...zStepCommon,
    drain: z.strictObject({
      node: zName,
      gracePeriod: z.number().int().min(-1).optional(),
      force: z.boolean().optional(),
      ignoreDaemonsets: z.boolean().optional(),
      deleteEmptydirData: z.boolean().optional(),
      timeout: zDuration.optional(),
      wait: z.boolean().optional(),
    }),
  }),
  /** The same steps `times` times in a row (expanded when the file is loaded; no ids inside). */
  repeat: z.strictObject({
    ...zStepCommon,
    repeat: z.strictObject({
      times: z.number().int().min(1).max(10_000),
      steps: z.array(z.unknown()).min(1, { message: 'repeat needs at least one step' }),
    }),
  }),
} as const;

export type StepKey = keyof typeof zStepSchemas;
export const STEP_KEYS = Object.keys(zStepSchemas) as StepKey[];

const zActorPattern = z.string().min(1);
const zCriCall = z.enum([
  'RunPodSandbox',
  'StopPodSandbox',
  'RemovePodSandbox',
  'PodSandboxStatus',
  'ListPodSandbox',
  'CreateContainer',
  'StartContainer',
  'StopContainer',
  'RemoveContainer',
  'ListContainers',
  'ContainerStatus',
  'ExecSync',
  'PullImage',
  'ImageStatus',
]);

/** Fault kinds: each maps onto an engine fault or an actor's config (see compile.ts). */
export const zFaultSchemas = {
  kubeletRestart: z.strictObject({ kind: z.literal('kubeletRestart'), node: zName, downFor: zDuration.optional() }),
  runtimeError: z.strictObject({
    kind: z.literal('runtimeError'),
    node: zName,
    call: zCriCall,
    code: z.enum(['NotFound', 'Unknown', 'DeadlineExceeded', 'Unavailable', 'InvalidArgument', 'FailedPrecondition']).optional(),
    message: z.string().optional(),
    for: zDuration.optional(),
  }),
  runtimeDelay: z.strictObject({
    kind: z.literal('runtimeDelay'),
    node: zName,
    call: zCriCall,
    /** Extra time before the runtime answers (a slow registry for PullImage, a hanging CNI teardown for StopPodSandbox). */
    delay: zDuration,
    for: zDuration.optional(),
  }),
  slowUnmount: z.strictObject({
    kind: z.literal('slowUnmount'),
    node: zName,
    volume: z.string().optional(),
    /** Unmount attempts fail until this long after the pod's unmount began. */
    for: zDuration.optional(),
    /** Each unmount attempt takes this long. */
    attempt: zDuration.optional(),
    error: z.string().optional(),
  }),
  delay: z.strictObject({ kind: z.literal('delay'), from: zActorPattern, to: zActorPattern, delay: zDuration, for: zDuration.optional() }),
  drop: z.strictObject({
    kind: z.literal('drop'),
    from: zActorPattern,
    to: zActorPattern,
    probability: z.number().min(0).max(1).optional(),
    for: zDuration.optional(),
  }),
  duplicate: z.strictObject({
    kind: z.literal('duplicate'),
    from: zActorPattern,
    to: zActorPattern,
    probability: z.number().min(0).max(1).optional(),
    delay: zDuration.optional(),
    for: zDuration.optional(),
  }),
  partition: z.strictObject({ kind: z.literal('partition'), a: zActorPattern, b: zActorPattern, for: zDuration.optional() }),
  nodeDown: z.strictObject({ kind: z.literal('nodeDown'), node: zName, for: zDuration.optional() }),
  /** The kubelet process stops (for `for`, else for good); the runtime and its containers keep running. */
  kubeletDown: z.strictObject({ kind: z.literal('kubeletDown'), node: zName, for: zDuration.optional() }),
  /**
   * The node is cut off from the control plane for `for`: its kubelet keeps running and keeps its
   * pods, but every request to the apiserver fails and its pod watch ends (re-established after).
   */
  networkPartition: z.strictObject({ kind: z.literal('networkPartition'), node: zName, for: zDuration.optional() }),
  nodeDeleted: z.strictObject({ kind: z.literal('nodeDeleted'), node: zName }),
  /**
   * A client's connection to the apiserver breaks for `for`: everything between them is lost (an
   * engine partition) and the client's watches end there, as a broken HTTP/2 connection ends
   * them (client-go then watches again from its last resourceVersion).
   */
  disconnect: z.strictObject({ kind: z.literal('disconnect'), client: zActorPattern, for: zDuration.optional() }),
} as const;

export type FaultKind = keyof typeof zFaultSchemas;
export const FAULT_KINDS = Object.keys(zFaultSchemas) as FaultKind[];
export type FaultSpec = { [K in FaultKind]: z.output<(typeof zFaultSchemas)[K]> }[FaultKind];

// ---- seed exploration (`podsim explore`) ---------------------------------------------------------

/** A fixed duration, or `[min, max]` drawn uniformly per fault. */
const zDurationRange = z.union([zDuration, z.tuple([zDuration, zDuration])], { error: 'expected a duration or [min, max]' });

/**
 * One kind of fault `podsim explore` draws: how many per run (`rate`, the Poisson mean at level
 * 1) and the ranges its fields are drawn from; targets default to every node / API client.
 */
export const zExploreFault = z.strictObject({
  kind: z.enum(['kubeletRestart', 'nodeDown', 'runtimeError', 'runtimeDelay', 'slowUnmount', 'delay', 'disconnect', 'drop', 'duplicate', 'partition']),
  rate: z.number().min(0).max(100),
  /** Node faults: the nodes to pick from (default every node). */
  nodes: z.array(zName).min(1).optional(),
  /** runtimeError / runtimeDelay: the CRI calls to pick from. */
  calls: z.array(zCriCall).min(1).optional(),
  code: z.enum(['NotFound', 'Unknown', 'DeadlineExceeded', 'Unavailable', 'InvalidArgument', 'FailedPrecondition']).optional(),
  /** disconnect: the API clients to pick from (default every kubelet, kube-controller-manager, kube-scheduler). */
  clients: z.array(zActorPattern).min(1).optional(),
  /** delay / drop / duplicate / partition: the links to pick from (partition reads from/to as a/b). */
  links: z.array(z.strictObject({ from: zActorPattern, to: zActorPattern })).min(1).optional(),
  /** How long the fault lasts (default 10s–30s). */
  for: zDurationRange.optional(),
  /** delay / runtimeDelay / duplicate: the added delay (default 1s–5s). */
  delay: zDurationRange.optional(),
  /** kubeletRestart: how long the kubelet is down (default 2s–20s). */
  downFor: zDurationRange.optional(),
  /** drop / duplicate: per-message probability (default 1). */
  probability: z.number().min(0).max(1).optional(),
});

/**
 * `explore:` — the fault phase and the healing phase of a seeded run (FoundationDB / TigerBeetle
 * style): faults start inside `window`, every one is over by `healAfter`, and after that each
 * deleted pod must be gone and its containers stopped within `livenessBudget`.
 */
export const zExplore = z.strictObject({
  window: z.tuple([zDuration, zDuration]),
  healAfter: zDuration,
  livenessBudget: zDuration,
  faults: z.array(zExploreFault),
});

export type ExploreSpec = z.output<typeof zExplore>;
export type ExploreFaultSpec = z.output<typeof zExploreFault>;

// ---- expectations -------------------------------------------------------------------------------

const zPodRef = z.string().min(1);
const zEvent = z.enum(['created', 'terminating', 'gone', 'TERM', 'KILL', 'exit', 'running', 'ready']);
/** A sequence of grace periods in seconds (`null`: a DELETE that carried none). */
const zGraces = z.array(z.union([z.number().int(), z.null()]));

const zWatchExpect = z.strictObject({
  match: z.enum(['exact', 'ordered']).optional(),
  /** Compare only this pod's rows (its own (READY, STATUS) sequence). */
  pod: zPodRef.optional(),
  rows: z.array(z.string().regex(/^\S+\s+\d+\/\d+\s+\S+$/, { message: 'expected "<pod> <READY> <STATUS>", e.g. "old 1/1 Running"' })).min(1),
});

export const zExpect = z.strictObject({
  /** Pod aliases, bound in order of pod creation (the first pod created is the first alias). */
  pods: z.array(z.string().regex(/^[A-Za-z][\w-]*$/, { message: 'expected an alias such as old or new' })).optional(),
  /** One watch expectation, or several (e.g. one per pod). */
  watch: z.union([zWatchExpect, z.array(zWatchExpect).min(1)], { error: 'expected {rows: [...]} or a list of them' }).optional(),
  timings: z
    .array(
      z.strictObject({
        /** A pod alias, or `*`: every pod the run created (see `of`). */
        pod: zPodRef,
        /** With `pod: "*"`: `each` (default) — every pod's event must fall in the window; `first` / `last` — the earliest / latest of them. */
        of: z.enum(['each', 'first', 'last']).optional(),
        /** Runtime events (TERM, KILL, exit, running) of this container only. */
        container: z.string().optional(),
        event: zEvent,
        /** Measured from the start of this step (by id); default the start of the run. */
        since: z.string().optional(),
        /** Measured from another event of the same pod instead of a step. */
        after: zEvent.optional(),
        within: z.tuple([zDuration, zDuration]).optional(),
        at: zDuration.optional(),
        tolerance: zDuration.optional(),
      }),
    )
    .optional(),
  exitCodes: z.array(z.strictObject({ pod: zPodRef, container: z.string().optional(), code: z.number().int() })).optional(),
  signals: z
    .array(z.strictObject({ pod: zPodRef, container: z.string().optional(), TERM: z.number().int().min(0).optional(), KILL: z.number().int().min(0).optional() }))
    .optional(),
  /**
   * Grace periods along a pod's deletion, each a sequence of distinct consecutive values:
   * `request` — gracePeriodSeconds of the driver's DELETEs and evictions of the pod (null: none sent);
   * `deletionGracePeriodSeconds` — as written by the apiserver; `killPod` — the kubelet's
   * effective grace per killPod; `stopContainer` — the StopContainer timeouts (per `container`).
   */
  grace: z
    .array(
      z.strictObject({
        pod: zPodRef,
        container: z.string().optional(),
        request: zGraces.optional(),
        deletionGracePeriodSeconds: zGraces.optional(),
        killPod: zGraces.optional(),
        stopContainer: zGraces.optional(),
      }),
    )
    .optional(),
  /** Pod and process counts: the most pod objects at once, pod objects and running containers when the run ended. */
  counts: z
    .strictObject({
      maxPods: z.number().int().min(0).optional(),
      podsAtEnd: z.number().int().min(0).optional(),
      runningAtEnd: z.number().int().min(0).optional(),
    })
    .optional(),
  /** `status.replicas` of a ReplicaSet (by name; default the first one created) as written, distinct consecutive values. */
  replicaSets: z
    .array(
      z.strictObject({
        name: z.string().optional(),
        /** From the start of this step (by id): the value then, and every later change. */
        since: z.string().optional(),
        statusReplicas: z.array(z.number().int().min(0)).min(1),
      }),
    )
    .optional(),
  /**
   * When a Job (by name; default the first one written) finished — its first write with a True
   * `Complete` or `Failed` condition (optionally with this reason) — or was `gone` (DELETED),
   * measured from the start of a step (by id; default the start of the run).
   */
  jobs: z
    .array(
      z.strictObject({
        name: z.string().optional(),
        event: z.enum(['Complete', 'Failed', 'gone']),
        reason: z.string().optional(),
        since: z.string().optional(),
        within: z.tuple([zDuration, zDuration]),
      }),
    )
    .optional(),
  /**
   * A Node's state at a time (`since` a step, plus `at`): its Ready condition (`True`, `False`,
   * `Unknown`; `kubectl get nodes` prints the last two as NotReady) and, with `taints`, exactly
   * these `key[=value]:effect` taints, in any order.
   */
  nodes: z
    .array(
      z.strictObject({
        node: zName,
        since: z.string().optional(),
        at: zDuration,
        ready: z.enum(['True', 'False', 'Unknown']).optional(),
        taints: z.array(z.string().regex(/^[^:\s]+:(NoSchedule|PreferNoSchedule|NoExecute)$/, { message: 'expected key[=value]:effect, e.g. node.kubernetes.io/unreachable:NoExecute' })).optional(),
      }),
    )
    .optional(),
  /** A pod's `Ready` condition at a time (the node lifecycle controller's MarkPodsNotReady sets it False; READY n/n does not change). */
  podReady: z.array(z.strictObject({ pod: z.string(), since: z.string().optional(), at: zDuration, ready: z.enum(['True', 'False']) })).optional(),
  /** What kubectl printed for a step (by id): each string appears in its output, in this order. */
  output: z.array(z.strictObject({ step: z.string().min(1), contains: z.array(z.string().min(1)).min(1) })).optional(),
  invariants: z
    .union([z.literal('clean'), z.strictObject({ allow: z.array(z.string()) })], { error: 'expected `clean` or {allow: [invariant ids]}' })
    .optional(),
  /** Request outcomes of the scenario's `traffic:` (issue #18): one bound set, or several (per source). */
  traffic: z.union([z.lazy(() => zTrafficExpect), z.array(z.lazy(() => zTrafficExpect)).min(1)]).optional(),
});

export type ExpectSpec = z.output<typeof zExpect>;

// ---- client traffic (issue #18) -----------------------------------------------------------------

/**
 * One traffic source: clients on `fromNodes` (default every node) sending `rate` requests per
 * second in all (a seeded Poisson process, split evenly over the nodes) to a Service's ClusterIP,
 * each on a new connection or over a pool of keep-alive connections, from `start` (after the
 * step `since`, if given) until `stop` (default: the end of the run). With `nodePort: true` the
 * clients are outside the cluster and send to the Service's node port on `toNodes` instead;
 * `clients` gives each request one of that many source identities (what ClientIP affinity keys on).
 */
export const zTrafficSource = z.strictObject({
  id: z.string().min(1).optional(),
  service: zName,
  namespace: zName.optional(),
  fromNodes: z.array(zName).min(1).optional(),
  /** Send from outside the cluster to the Service's node port (NodePort / LoadBalancer Services). */
  nodePort: z.boolean().optional(),
  /** With `nodePort`: the nodes whose node port the clients hit (default every node). */
  toNodes: z.array(zName).min(1).optional(),
  /** Distinct client identities (source IPs): per client node, or in all for `nodePort` (default 1). */
  clients: z.number().int().min(1).max(10_000).optional(),
  rate: z.number().positive().max(100_000),
  connection: z.enum(['new', 'keepAlive']).optional(),
  /** keepAlive: connections per client node (default 2). */
  pool: z.number().int().min(1).max(1000).optional(),
  /** Connect timeout and request timeout (default 1s). */
  timeout: zDuration.optional(),
  /** Idempotent retries of a failed request on a new connection (default 0). */
  retries: z.number().int().min(0).max(10).optional(),
  since: z.string().min(1).optional(),
  start: zDuration.optional(),
  stop: zDuration.optional(),
});

export type TrafficSourceSpec = z.output<typeof zTrafficSource>;

const zCountBound = z.strictObject({ min: z.number().int().min(0).optional(), max: z.number().int().min(0).optional() });

/** `expect: traffic:` — bounds on request outcomes over every traffic source (or one, by id). */
export const zTrafficExpect = z.strictObject({
  source: z.string().optional(),
  failed: zCountBound.optional(),
  served: zCountBound.optional(),
  refused: zCountBound.optional(),
  reset: zCountBound.optional(),
  timedOut: zCountBound.optional(),
});
export type TrafficExpectSpec = z.output<typeof zTrafficExpect>;

export const zScenarioDoc = z.strictObject({
  apiVersion: z.literal('podsim.dev/v1alpha1').optional(),
  kind: z.literal('Scenario').optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  cluster: zCluster,
  manifests: z.array(z.looseObject({})).optional(),
  manifestFiles: z.array(z.string().min(1)).optional(),
  steps: z.array(z.unknown()).min(1, { message: 'a scenario needs at least one step' }),
  /** Faults at absolute virtual times, independent of the timeline: `{at, id?, kind, …}` (what `podsim replay --shrink` writes). */
  faults: z.array(z.unknown()).optional(),
  explore: zExplore.optional(),
  expect: zExpect.optional(),
  /** Client traffic to Services (issue #18; harness/src/traffic). */
  traffic: z.array(z.lazy(() => zTrafficSource)).optional(),
});

export type ScenarioDoc = z.output<typeof zScenarioDoc>;
export type ClusterSpec = z.output<typeof zCluster>;
export type KubeletSettings = z.output<typeof zKubeletSettings>;
export type NodeSpecEntry = z.output<typeof zNode>;
export type NodePoolSpec = z.output<typeof zNodePool>;
export type StepSpec = { [K in StepKey]: z.output<(typeof zStepSchemas)[K]> }[StepKey];

// ---- Kubernetes manifests -------------------------------------------------------------------------

const zMeta = z.looseObject({
  name: zName.optional(),
  generateName: z.string().optional(),
  namespace: zName.optional(),
  labels: z.record(z.string(), z.string(), { error: 'labels must be string → string (quote numbers)' }).optional(),
  annotations: z.record(z.string(), z.string(), { error: 'annotations must be string → string (quote numbers)' }).optional(),
});

/**
 * A probe as `validateProbe` / `validateHandler` (pkg/apis/core/validation/validation.go, v1.22.8)
 * accept it: non-negative numbers (a 0 is defaulted by `SetDefaults_Probe`: timeout 1, period 10,
 * success 1, failure 3) and exactly one handler of exec, httpGet and tcpSocket (1.22 has no grpc).
 */
const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket'] as const;
const zProbe = z
  .looseObject({
    initialDelaySeconds: z.number().int().min(0).optional(),
    periodSeconds: z.number().int().min(0).optional(),
    timeoutSeconds: z.number().int().min(0).optional(),
    successThreshold: z.number().int().min(0).optional(),
    failureThreshold: z.number().int().min(0).optional(),
  })
  .superRefine((p, ctx) => {
    const set = PROBE_HANDLERS.filter((h) => p[h] !== undefined && p[h] !== null);
    if (set.length === 0) ctx.addIssue({ code: 'custom', message: `must specify a handler type (one of ${PROBE_HANDLERS.join(', ')})` });
    for (const h of set.slice(1)) ctx.addIssue({ code: 'custom', path: [h], message: 'may not specify more than 1 handler type' });
  });

/** `validateContainers`: liveness and startup probes need `successThreshold` 1 (0 is defaulted to 1). */
const oneSuccess = (p: { successThreshold?: number } | undefined) => p?.successThreshold === undefined || p.successThreshold <= 1;

const zContainer = z
  .looseObject({
    name: zName,
    image: z.string().min(1, { message: 'a container needs an image' }),
    readinessProbe: zProbe.optional(),
    livenessProbe: zProbe.optional(),
    startupProbe: zProbe.optional(),
  })
  .superRefine((c, ctx) => {
    for (const k of ['livenessProbe', 'startupProbe'] as const) {
      if (!oneSuccess(c[k])) ctx.addIssue({ code: 'custom', path: [k, 'successThreshold'], message: 'must be 1' });
    }
  });

/** `validateInitContainers`: no lifecycle hooks and no probes on an init container. */
const INIT_FORBIDDEN = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;
const zInitContainer = zContainer.superRefine((c, ctx) => {
  for (const k of INIT_FORBIDDEN) if (c[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'must not be set for init containers' });
});

export const zPodSpec = z
  .looseObject({
    containers: z.array(zContainer).min(1, { message: 'a pod needs at least one container' }),
    initContainers: z.array(zInitContainer).optional(),
    terminationGracePeriodSeconds: z.number().int().optional(),
    restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).optional(),
    nodeName: z.string().optional(),
  })
  .superRefine((spec, ctx) => {
    // `validateContainers` / `validateInitContainers`: one name space for both lists.
    const seen = new Set<string>();
    for (const [list, cs] of [['containers', spec.containers], ['initContainers', spec.initContainers ?? []]] as const) {
      cs.forEach((c, i) => {
        if (seen.has(c.name)) ctx.addIssue({ code: 'custom', path: [list, i, 'name'], message: `Duplicate value: ${JSON.stringify(c.name)}` });
        seen.add(c.name);
      });
    }
  });

const zTemplate = z.looseObject({
  metadata: z.looseObject({ labels: z.record(z.string(), z.string()).optional(), annotations: z.record(z.string(), z.string()).optional() }).optional(),
  spec: zPodSpec,
});

const zSelector = z.looseObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.looseObject({ key: z.string(), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']) })).optional(),
});

/** Per-kind manifest schemas; `apiVersion` must be the one Kubernetes serves the kind under. */
/** An IntOrString count (`minAvailable`, `maxUnavailable`): a non-negative integer or a string (the apiserver checks the percent). */
const zIntOrPercent = z.union([z.number().int().min(0), z.string()], { error: 'expected a non-negative integer or a percentage such as "50%"' });

export const zManifests = {
  Pod: z.looseObject({ apiVersion: z.literal('v1'), kind: z.literal('Pod'), metadata: zMeta, spec: zPodSpec }),
  Node: z.looseObject({ apiVersion: z.literal('v1'), kind: z.literal('Node'), metadata: zMeta }),
  Namespace: z.looseObject({ apiVersion: z.literal('v1'), kind: z.literal('Namespace'), metadata: zMeta }),
  ReplicaSet: z.looseObject({
    apiVersion: z.literal('apps/v1'),
    kind: z.literal('ReplicaSet'),
    metadata: zMeta,
    spec: z.looseObject({ replicas: z.number().int().min(0).optional(), selector: zSelector, template: zTemplate }),
  }),
  Deployment: z.looseObject({
    apiVersion: z.literal('apps/v1'),
    kind: z.literal('Deployment'),
    metadata: zMeta,
    spec: z.looseObject({
      replicas: z.number().int().min(0).optional(),
      selector: zSelector,
      template: zTemplate,
      strategy: z.looseObject({ type: z.enum(['Recreate', 'RollingUpdate']).optional() }).optional(),
    }),
  }),
  PodDisruptionBudget: z.looseObject({
    // A v1.22.8 cluster also serves policy/v1beta1 (deprecated in v1.21, gone in v1.25), whose
    // empty selector matches no pod where policy/v1's matches all: say so rather than convert.
    apiVersion: z.literal('policy/v1', {
      error: (iss) =>
        iss.input === 'policy/v1beta1'
          ? 'podsim simulates policy/v1 PodDisruptionBudgets only (v1.22.8 also serves the deprecated policy/v1beta1, where an empty selector {} selects no pod; in policy/v1 it selects every pod of the namespace): write apiVersion: policy/v1 with the selector you mean'
          : 'Invalid input: expected "policy/v1"',
    }),
    kind: z.literal('PodDisruptionBudget'),
    metadata: zMeta,
    // policy/v1 requires no spec: a budget without one selects no pod.
    spec: z
      .looseObject({
        minAvailable: zIntOrPercent.optional(),
        maxUnavailable: zIntOrPercent.optional(),
        selector: zSelector.optional(),
      })
      .optional(),
  }),
  Job: z.looseObject({
    apiVersion: z.literal('batch/v1'),
    kind: z.literal('Job'),
    metadata: zMeta,
    spec: z.looseObject({
      parallelism: z.number().int().min(0).optional(),
      completions: z.number().int().min(0).optional(),
      backoffLimit: z.number().int().min(0).optional(),
      activeDeadlineSeconds: z.number().int().min(1).optional(),
      ttlSecondsAfterFinished: z.number().int().min(0).optional(),
      completionMode: z.enum(['NonIndexed', 'Indexed']).optional(),
      suspend: z.boolean().optional(),
      selector: zSelector.optional(),
      template: zTemplate,
    }),
  }),
  DaemonSet: z.looseObject({
    apiVersion: z.literal('apps/v1'),
    kind: z.literal('DaemonSet'),
    metadata: zMeta,
    spec: z.looseObject({
      selector: zSelector,
      template: zTemplate,
      minReadySeconds: z.number().int().min(0).optional(),
      updateStrategy: z
        .looseObject({
          type: z.enum(['RollingUpdate', 'OnDelete']).optional(),
          rollingUpdate: z.looseObject({ maxUnavailable: zIntOrPercent.optional(), maxSurge: zIntOrPercent.optional() }).optional(),
        })
        .optional(),
    }),
  }),
  StatefulSet: z.looseObject({
    apiVersion: z.literal('apps/v1'),
    kind: z.literal('StatefulSet'),
    metadata: zMeta,
    spec: z.looseObject({
      // MAX_SIMULATED_STATEFULSET_REPLICAS (packages/controllers/src/statefulset/statefulSet.ts).
      replicas: z.number().int().min(0).max(100_000, { message: 'podsim simulates StatefulSets of at most 100000 replicas' }).optional(),
      selector: zSelector,
      template: zTemplate,
      serviceName: z.string().optional(),
      podManagementPolicy: z.enum(['OrderedReady', 'Parallel']).optional(),
      updateStrategy: z
        .looseObject({
          type: z.enum(['RollingUpdate', 'OnDelete']).optional(),
          rollingUpdate: z.looseObject({ partition: z.number().int().min(0).optional() }).optional(),
        })
        .optional(),
      volumeClaimTemplates: z.array(z.looseObject({ metadata: z.looseObject({ name: zName }) })).optional(),
    }),
  }),
  PersistentVolumeClaim: z.looseObject({
    apiVersion: z.literal('v1'),
    kind: z.literal('PersistentVolumeClaim'),
    metadata: zMeta,
    spec: z.looseObject({ accessModes: z.array(z.string()).min(1, { message: 'at least 1 access mode is required' }) }),
  }),
  /** v1 Service (issue #18): the apiserver allocates the ClusterIP and checks the rest (serviceStrategy.ts). */
  Service: z.looseObject({
    apiVersion: z.literal('v1'),
    kind: z.literal('Service'),
    metadata: zMeta,
    spec: z.looseObject({
      selector: z.record(z.string(), z.string(), { error: 'selector must be string → string (quote numbers)' }).optional(),
      ports: z
        .array(
          z.looseObject({
            name: z.string().optional(),
            port: z.number().int().min(1).max(65535),
            targetPort: z.union([z.number().int().min(1).max(65535), z.string().min(1)]).optional(),
            protocol: z.enum(['TCP', 'UDP', 'SCTP']).optional(),
          }),
        )
        .optional(),
      type: z.enum(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']).optional(),
      sessionAffinity: z.enum(['None', 'ClientIP']).optional(),
      publishNotReadyAddresses: z.boolean().optional(),
      externalTrafficPolicy: z.enum(['Cluster', 'Local']).optional(),
      internalTrafficPolicy: z.enum(['Cluster', 'Local']).optional(),
    }),
  }),
  /** v1 Endpoints written by hand (a Service without a selector). */
  Endpoints: z.looseObject({ apiVersion: z.literal('v1'), kind: z.literal('Endpoints'), metadata: zMeta }),
} as const;

export type ManifestKind = keyof typeof zManifests;
export const MANIFEST_KINDS = Object.keys(zManifests) as ManifestKind[];
