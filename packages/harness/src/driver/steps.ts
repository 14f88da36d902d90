/**
 * The scenario driver's compiled timeline: plain data (it is the `driver` actor's config and
 * crosses threads). Each step is what a user would type — `kubectl apply`, `kubectl delete`
 * (after kubectl v0.22.8 `pkg/cmd/delete/delete.go` flag rewrites), `kubectl scale`,
 * `kubectl wait`, `sleep`, `kubectl get pods -w` — already validated and with durations in
 * virtual µs. Engine-level faults are not here: they are compiled into the run's fault list.
 */
import type { DeleteOptions, KubeObject, ResourceName, VirtualTime, DurationUs } from '@podsim/api';

/** Which objects a delete / wait addresses (exactly one of name, selector, all). */
export interface ObjectTarget {
  readonly resource: ResourceName;
  /** Omitted for cluster-scoped resources (nodes). */
  readonly namespace?: string;
  readonly name?: string;
  /** Label selector, Kubernetes string syntax (`app=minio,tier!=db`). */
  readonly selector?: string;
  readonly all?: boolean;
}

interface StepBase {
  /** Position in the scenario's `steps` list (0-based), for trace records and messages. */
  readonly index: number;
  /** The step's optional `id`, referenced by expectations (`since: <id>`). */
  readonly id?: string;
  /** Absolute virtual start time, if the scenario pinned one with `at:`. */
  readonly atUs?: VirtualTime;
  /** 1-based line of the step in the scenario file (for messages). */
  readonly line?: number;
  /** The scenario says this step must fail (a refused request, a wait that times out); judged by the report, not the driver. */
  readonly expectFailure?: boolean;
}

/** `kubectl apply` (create, or replace spec/labels/annotations of an existing object) or `kubectl create`. */
export interface ApplyStep extends StepBase {
  readonly kind: 'apply' | 'create';
  readonly objects: readonly KubeObject[];
}

/** `kubectl delete`. `options` already carries kubectl's rewrites (`--grace-period=0` → 1, …). */
export interface DeleteStep extends StepBase {
  readonly kind: 'delete';
  readonly target: ObjectTarget;
  readonly options: DeleteOptions;
  /** kubectl's `--wait`: block the timeline until every deleted UID is gone. */
  readonly wait: boolean;
  readonly timeoutUs: DurationUs;
  /** The command line as kubectl would print it, for reports. */
  readonly command: string;
  /** kubectl's stderr warning before it deletes (`--force --grace-period=0`). */
  readonly warning?: string;
  /** What kubectl prints per deleted object: `deleted`, or `force deleted` when the grace is 0. */
  readonly verb: 'deleted' | 'force deleted';
  /**
   * Pods only, with a selector or `all`: delete just this many of the matching pods that are not
   * already terminating, oldest first (order of creation) — one pod of a Deployment, whose
   * generated name the scenario cannot know.
   */
  readonly count?: number;
}

/**
 * `kubectl patch <kind> <name> --type <type> -p <patch>`, or `kubectl set image` compiled to the
 * strategic merge patch of the pod template it sends: one PATCH of the object.
 */
export interface PatchStep extends StepBase {
  readonly kind: 'patch';
  readonly resource: ResourceName;
  readonly namespace?: string;
  readonly name: string;
  readonly patchType: 'strategic' | 'merge' | 'json';
  readonly patch: unknown;
  /** The command line as kubectl would print it, for reports. */
  readonly command: string;
  /** What kubectl prints on success, e.g. `pod/p patched`, `deployment.apps/d image updated`. */
  readonly success: string;
}

/** `kubectl scale --replicas`. */
export interface ScaleStep extends StepBase {
  readonly kind: 'scale';
  readonly resource: 'deployments' | 'replicasets' | 'statefulsets';
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
}

/** Conditions `wait` understands. */
export type WaitCondition = 'exists' | 'running' | 'ready' | 'terminating' | 'gone';

/**
 * `kubectl wait`: blocks the timeline until the condition holds or `timeoutUs` passes (then the
 * step fails and the timeline continues). For `running` / `ready` only pods without a
 * deletionTimestamp count and at least `count` (default 1) must match; `gone` waits until the
 * pods that matched (by name or selector) when the wait began are gone — all of them, or any
 * `count` of them (the step fails at once if fewer matched); `terminating` until every match has
 * a deletionTimestamp.
 */
export interface WaitStep extends StepBase {
  readonly kind: 'wait';
  readonly condition: WaitCondition;
  readonly target: ObjectTarget;
  /** How many pods must match (`gone`: must be gone; 0 = every pod that matched at the start). */
  readonly count: number;
  readonly timeoutUs: DurationUs;
}

/** Advance virtual time. */
export interface SleepStep extends StepBase {
  readonly kind: 'sleep';
  readonly durationUs: DurationUs;
}

/** `kubectl get pods -w` (start) / Ctrl-C (stop). */
export interface WatchStep extends StepBase {
  readonly kind: 'watch';
  readonly action: 'start' | 'stop';
  readonly namespace?: string;
  readonly selector?: string;
  readonly wide?: boolean;
}

/**
 * A fault marker. Engine and actor-config faults were compiled statically; the driver only
 * records when they take effect. `nodeDeleted` is performed by the driver (DELETE the Node).
 */
export interface FaultStep extends StepBase {
  readonly kind: 'fault';
  readonly fault: string;
  readonly summary: string;
  /** For `nodeDeleted`: the Node to delete through the API. */
  readonly deleteNode?: string;
}

/**
 * `kubectl cordon NODE` / `kubectl uncordon NODE` (kubectl v0.22.8 `pkg/cmd/drain` RunCordonOrUncordon):
 * GET the Node, then — unless spec.unschedulable already has the wanted value — one strategic merge
 * PATCH of spec.unschedulable.
 */
export interface CordonStep extends StepBase {
  readonly kind: 'cordon' | 'uncordon';
  readonly node: string;
}

/**
 * `kubectl taint nodes NODE …` (kubectl v0.22.8 `pkg/cmd/taint`): GET the Node, compute its new
 * taints (an added taint carries no `timeAdded`; a key+effect already there is an error unless
 * `overwrite`; a removal of a taint that is not there is an error), then one strategic merge
 * PATCH of `spec.taints`. Prints `node/NODE tainted` / `node/NODE untainted`.
 */
export interface TaintStep extends StepBase {
  readonly kind: 'taint';
  readonly node: string;
  readonly key: string;
  readonly value?: string;
  /** Undefined only for a removal of every effect of `key`. */
  readonly effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  readonly remove: boolean;
  readonly overwrite: boolean;
}

/**
 * One POST of `pods/{name}/eviction` (policy/v1 Eviction), what `kubectl drain` sends per pod
 * (kubectl v0.22.8 `pkg/drain/drain.go` EvictPod) — without drain's retries and wait.
 */
export interface EvictStep extends StepBase {
  readonly kind: 'evict';
  readonly namespace: string;
  readonly name: string;
  /** DeleteOptions.gracePeriodSeconds; omitted: the pod's terminationGracePeriodSeconds. */
  readonly gracePeriodSeconds?: number;
}

/**
 * `kubectl drain NODE` (kubectl v0.22.8 `pkg/cmd/drain` RunDrain + `pkg/drain`): cordon, list the
 * node's pods, filter them (DaemonSet, mirror, emptyDir, unreplicated), evict each (retrying every
 * 5 s on 429 / 403 NamespaceTerminating), then poll each evicted pod by UID until it is gone.
 */
export interface DrainStep extends StepBase {
  readonly kind: 'drain';
  readonly node: string;
  /** `--grace-period`; omitted (kubectl's -1): the pod's own terminationGracePeriodSeconds. */
  readonly gracePeriodSeconds?: number;
  readonly force: boolean;
  readonly ignoreDaemonsets: boolean;
  readonly deleteEmptydirData: boolean;
  /** `--timeout`, the global deadline of the evictions and the wait (virtual µs). */
  readonly timeoutUs: DurationUs;
  /** false: the step ends once every eviction was accepted (podsim's; kubectl always waits). */
  readonly wait: boolean;
}

export type DriverStep =
  | ApplyStep
  | DeleteStep
  | PatchStep
  | ScaleStep
  | WaitStep
  | SleepStep
  | WatchStep
  | FaultStep
  | CordonStep
  | TaintStep
  | EvictStep
  | DrainStep;

/** The driver actor's config. */
export interface DriverConfig {
  readonly steps: readonly DriverStep[];
  /** Namespace of the informer that evaluates `wait` (omit for all namespaces). */
  readonly informerNamespace?: string;
  /** Extra virtual time to keep running after the last step before calling stopRun. */
  readonly drainUs?: DurationUs;
  /**
   * The client-side rate limit of each kubectl command (client-go's token bucket; default
   * {@link KUBECTL_QPS} / {@link KUBECTL_BURST}); `qps` 0 turns it off.
   */
  readonly kubectl?: { readonly qps: number; readonly burst: number };
}

/**
 * kubectl v0.22.8's REST client limits: kubectl sets neither `rest.Config.QPS` nor `Burst`
 * (cli-runtime `genericclioptions.ConfigFlags` raises only the discovery client's burst), so
 * client-go's `rest.RESTClientFor` applies `DefaultQPS` 5 and `DefaultBurst` 10
 * (k8s.io/client-go/rest/config.go). Each kubectl command is a new process: a full bucket.
 */
export const KUBECTL_QPS = 5;
export const KUBECTL_BURST = 10;

/** Actor id of the scenario driver (docs/conventions.md). */
export const DRIVER_ACTOR = 'driver';
