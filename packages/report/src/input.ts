/**
 * What the HTML report is drawn from: plain data the harness fills from a finished run (its
 * RunReport, the merged trace, the plan), a bench result or an explore summary. Nothing here
 * knows the engine or the trace format; the harness maps its records onto these shapes, and
 * this package reduces them (aggregates, samples) to what each chart gets (charts.ts).
 * Times are virtual µs since the run's epoch unless a name says otherwise (`wallSeconds`).
 */

/** Which command wrote the report (it decides the sections). */
export type ReportCommand = 'run' | 'bench' | 'explore';

/** The page's header: what ran, how, and how to run it again. */
export interface ReportHeader {
  readonly command: ReportCommand;
  /** The scenario (file) or bench configuration, as the user named it. */
  readonly scenario: string;
  readonly scenarioName?: string;
  readonly seed?: number;
  readonly placement?: string;
  /** `podsim 0.1.0`. */
  readonly podsimVersion: string;
  /** The simulated Kubernetes release, `v1.22.8`. */
  readonly kubernetesVersion: string;
  readonly virtualSeconds?: number;
  readonly wallSeconds?: number;
  /** Empty or undefined when the run failed before a digest was taken. */
  readonly traceDigest?: string;
  /** The exact command that replays this run (or this exploration). */
  readonly replay?: string;
  /** `PASS`, `FAIL`, or the no-expectations line; `ok` decides the colour. */
  readonly verdict: string;
  readonly ok: boolean;
  /** Why it failed, one line each (empty when ok). */
  readonly failures: readonly string[];
  /** How the run ended (`stopped`, `bound`, `interrupted`, `failed` …). */
  readonly end?: string;
  /** Free lines shown under the header (client limits, warnings, bench figures). */
  readonly notes?: readonly string[];
}

/**
 * One line of the expectations / invariants table. `ok: 'unchecked'` marks something the run
 * did not judge (a kind or feature not simulated, an interrupted run): never shown as a pass.
 */
export interface ReportCheck {
  readonly group: 'step' | 'expectation' | 'invariant';
  readonly name: string;
  readonly ok: boolean | 'unchecked';
  readonly detail?: string;
}

/**
 * One pod's life as the API saw it (watch events): created (ADDED), bound to a node
 * (`spec.nodeName` set), Running (`status.phase`), finished (Succeeded / Failed), delete
 * accepted (`deletionTimestamp` first set), gone (DELETED). Absent fields did not happen.
 */
export interface PodLife {
  readonly name: string;
  readonly namespace?: string;
  readonly node?: string;
  readonly createdUs: number;
  readonly scheduledUs?: number;
  readonly runningUs?: number;
  readonly finishedUs?: number;
  readonly deletedUs?: number;
  readonly goneUs?: number;
}

/** A span of a pod's kill path (see {@link KillPath}). */
export interface KillSpan {
  /** `Terminating`, `preStop`, `StopContainer`, `killPod`, `StopPodSandbox`, `syncTerminatedPod`. */
  readonly step: string;
  readonly container?: string;
  readonly beginUs: number;
  /** Undefined: still open when the run ended (drawn to the end, marked unfinished). */
  readonly endUs?: number;
  readonly detail?: string;
}

/** An instant of a pod's kill path. */
export interface KillMark {
  /** `DELETE`, `SIGTERM`, `SIGKILL`, `exit`, `status PATCH`, `final DELETE`, `DELETED`. */
  readonly step: string;
  readonly t: number;
  readonly container?: string;
  /** `exit 137`, `grace 30s`, `→ 200` … */
  readonly detail?: string;
}

/**
 * The kill path of one deleted pod, as the kubelet, the runtime and the apiserver traced it:
 * kubelet `killPod` → per container preStop (ExecSync) and `StopContainer(grace)` (SIGTERM,
 * then SIGKILL at the deadline) → StopPodSandbox → syncTerminatedPod (volumes unmounted,
 * cgroup removed) → status PATCH → the status manager's grace-0 DELETE → DELETED
 * (pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer, pkg/kubelet/status).
 */
export interface KillPath {
  readonly pod: string;
  readonly node?: string;
  readonly deleteUs: number;
  readonly goneUs?: number;
  readonly spans: readonly KillSpan[];
  readonly marks: readonly KillMark[];
}

/** One client-side rate-limiter wait: a request of `client` on `actor` waited `waitUs` for a token from `t` on. */
export interface ThrottleWait {
  readonly t: number;
  /** The actor whose client waited (`kubelet/n1`, `kube-controller-manager`, `driver`). */
  readonly actor: string;
  /** `kubelet`, `kubelet events`, a controller client's name, `kubectl`. */
  readonly client: string;
  readonly waitUs: number;
  readonly qps?: number;
  readonly burst?: number;
}

/** One seed of an exploration. */
export interface ExploreSeed {
  readonly seed: number;
  /** `pass`, `fail`, `crash`, `timeout` … as the explorer named the outcome. */
  readonly outcome: string;
  /** The first violated invariant (or failed check) of a failing seed. */
  readonly firstViolation?: string;
  readonly message?: string;
  readonly replay?: string;
  /** The shrunk scenario (YAML), after `--shrink`. */
  readonly shrunk?: string;
  readonly shrunkSteps?: number;
}

export interface ExploreSection {
  readonly seeds: readonly ExploreSeed[];
  /** Seeds asked for, when fewer ran (an interrupted exploration). */
  readonly requested?: number;
  readonly faults?: string;
}

/**
 * A section another subsystem adds without changing this package's input (an extension
 * point: endpoints per Service …): a titled
 * set of time series (drawn as lines) and/or a table. Values are plain numbers; `unit` labels
 * the y axis.
 */
export interface ExtraSection {
  readonly id: string;
  readonly title: string;
  readonly description?: string;
  readonly series?: ReadonlyArray<{ readonly name: string; readonly points: ReadonlyArray<readonly [tUs: number, value: number]> }>;
  readonly unit?: string;
  readonly table?: { readonly columns: readonly string[]; readonly rows: ReadonlyArray<ReadonlyArray<string | number>> };
}

/** Request outcomes of client traffic, in stacking order (spec endpoints-traffic §9, §11.2). */
export const TRAFFIC_OUTCOMES = ['served', 'refused', 'reset', 'timedOut'] as const;
export type TrafficOutcome = (typeof TRAFFIC_OUTCOMES)[number];

/**
 * One traffic source's results (a scenario's `traffic:` entry, decided per request as spec §11.2
 * does): totals by outcome and by §9 cause, failed requests by the pod they were sent to and by
 * client node, and every request by outcome per time bucket (by the time it was sent).
 */
export interface TrafficSourceResults {
  readonly id: string;
  /** `namespace/name` of the Service. */
  readonly service: string;
  readonly connection: 'new' | 'keepAlive';
  readonly fromNodes: readonly string[];
  readonly startUs: number;
  readonly stopUs: number;
  readonly requests: number;
  readonly byOutcome: Readonly<Record<TrafficOutcome, number>>;
  /** Failed requests by cause (`REFUSED_POD`, `TIMEOUT_DEAD_IP`, …). */
  readonly byCause: Readonly<Record<string, number>>;
  /** Failed requests by pod name; `''`: no pod was chosen (REJECT, no rules yet). */
  readonly byPod: Readonly<Record<string, number>>;
  /** Failed requests by client node. */
  readonly byNode: Readonly<Record<string, number>>;
  /** Requests per outcome in buckets of `bucketUs` from `startUs`: `counts.served[k]` were sent in [startUs + k·bucketUs, …). */
  readonly overTime: { readonly startUs: number; readonly bucketUs: number; readonly counts: Readonly<Record<TrafficOutcome, readonly number[]>> };
}

/**
 * One pod's exposure window (spec endpoints-traffic §11.3): from its listener closing (SIGTERM +
 * the app's `podsim.dev/close-listener-after`) to the last client node's kube-proxy sync that
 * dropped it (the applied view of pkg/proxy/iptables/proxier.go syncProxyRules, as packages/proxy
 * traces it in `proxy.sync`); new connections routed to it inside fail (refused, or timed out once
 * its IP is gone).
 */
export interface TrafficExposure {
  readonly pod: string;
  /** Undefined: the listener never closed during the run. */
  readonly listenerClosedUs?: number;
  /** Per client node, when its applied rules stopped selecting the pod (virtual µs). */
  readonly ruleRemovedUs: Readonly<Record<string, number>>;
  /** Requests refused by the pod or timed out on its dead IP. */
  readonly failedRequests: number;
}

/** The traffic section: drawn only when the scenario has `traffic:`. */
export interface TrafficSection {
  readonly sources: readonly TrafficSourceResults[];
  readonly exposure: readonly TrafficExposure[];
  /** The `expect: traffic:` checks (also in {@link ReportInput.checks}). */
  readonly checks: readonly ReportCheck[];
  /** What the traffic model does not simulate (no verdict covers it). */
  readonly notSimulated: readonly string[];
  /** Set when the run ended before its timeline did: the traffic stopped with it, its checks are unchecked. */
  readonly cutShort?: string;
}

/** Everything one report page is drawn from. */
export interface ReportInput {
  readonly header: ReportHeader;
  readonly checks: readonly ReportCheck[];
  /** Every pod the run created (run, bench). */
  readonly pods?: readonly PodLife[];
  /** Kill paths of the pods the harness chose (see {@link chooseKillPathPods}); `killPathNote` says how. */
  readonly killPaths?: readonly KillPath[];
  readonly killPathNote?: string;
  /** Client-side rate-limiter waits (empty: none waited; undefined: not recorded). */
  readonly throttle?: readonly ThrottleWait[];
  /** The `kubectl get pods -w` lines, as printed. */
  readonly watch?: readonly string[];
  /** Draw the per-node drain chart (bench: one chart per node's pods, from {@link pods}). */
  readonly nodeDrain?: boolean;
  readonly explore?: ExploreSection;
  /** Client traffic results (issue #18): undefined when the run had no `traffic:`. */
  readonly traffic?: TrafficSection;
  /** Sections from other subsystems, drawn after the built-in ones. */
  readonly extra?: readonly ExtraSection[];
}
