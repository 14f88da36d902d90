/**
 * The node lifecycle controller's pure bookkeeping (`pkg/controller/nodelifecycle/
 * node_lifecycle_controller.go` v1.23.13 read, 1.22 semantics; node-lifecycle spec §3.3–§3.8):
 * `tryUpdateNodeHealth`'s decision (probe timestamps kept on the controller's own clock, the
 * lease check, the Unknown conditions), `ComputeZoneState`, the per-state eviction QPS
 * (`setLimiterInZone` with `ReducedQPSFunc` / `HealthyQPSFunc`), `GetZoneKey`, the condition →
 * NoSchedule taint map of `doNoScheduleTaintingPass`, and the taint-set helpers of
 * `pkg/util/taints`. No API calls here: the controller performs what these functions decide.
 * Times are virtual µs.
 */
import type { Lease, Node, NodeCondition, Taint } from '@podsim/api';
import { LABEL_NODE_EXCLUDE_DISRUPTION, zoneKey } from '@podsim/api';

export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_NODE_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_NODE_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_NODE_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const TAINT_NODE_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
/** `labelNodeDisruptionExclusion` (defined in @podsim/api, where the apiserver's trace reads it too). */
export { LABEL_NODE_EXCLUDE_DISRUPTION };

/** `UnreachableTaintTemplate` / `NotReadyTaintTemplate`. */
export const UNREACHABLE_NO_EXECUTE: Taint = { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' };
export const NOT_READY_NO_EXECUTE: Taint = { key: TAINT_NODE_NOT_READY, effect: 'NoExecute' };

export const NODE_STATUS_UNKNOWN_REASON = 'NodeStatusUnknown';
export const NODE_STATUS_UNKNOWN_MESSAGE = 'Kubelet stopped posting node status.';
export const NODE_STATUS_NEVER_UPDATED_REASON = 'NodeStatusNeverUpdated';
export const NODE_STATUS_NEVER_UPDATED_MESSAGE = 'Kubelet never posted node status.';

/** The conditions the NLC sets to Unknown (NetworkUnavailable is left alone on purpose). */
export const UNKNOWN_CONDITION_TYPES = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

/** `nodeConditionToTaintKeyStatusMap`. */
const CONDITION_TAINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: TAINT_NODE_NOT_READY, Unknown: TAINT_NODE_UNREACHABLE },
  MemoryPressure: { True: TAINT_NODE_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_NODE_DISK_PRESSURE },
  NetworkUnavailable: { True: TAINT_NODE_NETWORK_UNAVAILABLE },
  PIDPressure: { True: TAINT_NODE_PID_PRESSURE },
};
/** `taintKeyToNodeConditionMap` keys. */
const CONDITION_TAINT_KEYS: ReadonlySet<string> = new Set([TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, TAINT_NODE_MEMORY_PRESSURE, TAINT_NODE_DISK_PRESSURE, TAINT_NODE_NETWORK_UNAVAILABLE, TAINT_NODE_PID_PRESSURE]);

/** The controller's defaults (kube-controller-manager v1.22 flags), µs where durations. */
export interface NodeLifecycleConfig {
  /** `--node-monitor-period` (5 s). */
  readonly nodeMonitorPeriodUs: number;
  /** `--node-monitor-grace-period` (40 s). */
  readonly nodeMonitorGracePeriodUs: number;
  /** `--node-startup-grace-period` (60 s). */
  readonly nodeStartupGracePeriodUs: number;
  /** `--node-eviction-rate` (0.1 nodes/s per zone). */
  readonly evictionLimiterQPS: number;
  /** `--secondary-node-eviction-rate` (0.01). */
  readonly secondaryEvictionLimiterQPS: number;
  /** `--large-cluster-size-threshold` (50). */
  readonly largeClusterThreshold: number;
  /** `--unhealthy-zone-threshold` (0.55). */
  readonly unhealthyZoneThreshold: number;
}

export const DEFAULT_NODE_LIFECYCLE_CONFIG: NodeLifecycleConfig = {
  nodeMonitorPeriodUs: 5_000_000,
  nodeMonitorGracePeriodUs: 40_000_000,
  nodeStartupGracePeriodUs: 60_000_000,
  evictionLimiterQPS: 0.1,
  secondaryEvictionLimiterQPS: 0.01,
  largeClusterThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

/** `nodeHealthData`: what the controller remembers of a node, on its own clock. */
export interface NodeHealthData {
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  /** The Ready condition as last saved (undefined: none). */
  savedReady: NodeCondition | undefined;
  /** The lease renewTime last saved, parsed to µs (undefined: no lease seen). */
  leaseRenewUs: number | undefined;
}

/** What one `tryUpdateNodeHealth` decided. */
export interface NodeHealthDecision {
  readonly gracePeriodUs: number;
  /** The Ready condition as observed at the start (a synthetic Unknown when absent). */
  readonly observed: NodeCondition;
  /** The Ready condition after the pass (undefined when the node has none and none was added). */
  readonly current: NodeCondition | undefined;
  /** The new health entry (to save on success). */
  readonly health: NodeHealthData;
  /** The Node with Unknown conditions to PUT (`UpdateStatus`), when the Ready condition changed. */
  readonly update: Node | undefined;
}

export function getCondition(conds: readonly NodeCondition[] | undefined, type: string): NodeCondition | undefined {
  if (!conds) return undefined;
  for (const c of conds) if (c.type === type) return c;
  return undefined;
}

/**
 * `tryUpdateNodeHealth`'s decision for `node` at `now`. `saved` is the entry from the previous
 * pass (undefined on first sight); `leaseRenewUs` the informer's lease renewTime (undefined: no
 * lease); `creationUs` the node's creationTimestamp; `format` prints `metav1.Time`.
 */
export function decideNodeHealth(
  node: Node,
  saved: NodeHealthData | undefined,
  leaseRenewUs: number | undefined,
  now: number,
  creationUs: number,
  cfg: NodeLifecycleConfig,
  format: (us: number) => string,
): NodeHealthDecision {
  const currentReady = getCondition(node.status?.conditions, 'Ready');
  let observed: NodeCondition;
  let gracePeriodUs: number;
  let health: NodeHealthData | undefined = saved ? { ...saved } : undefined;
  if (!currentReady) {
    const ct = node.metadata.creationTimestamp;
    observed = { type: 'Ready', status: 'Unknown', lastHeartbeatTime: ct, lastTransitionTime: ct };
    gracePeriodUs = cfg.nodeStartupGracePeriodUs;
    if (!health) health = { probeTimestamp: creationUs, readyTransitionTimestamp: creationUs, savedReady: undefined, leaseRenewUs: undefined };
    else health.savedReady = undefined;
  } else {
    observed = { ...currentReady };
    gracePeriodUs = cfg.nodeMonitorGracePeriodUs;
  }
  const savedReady = saved?.savedReady;
  const savedLease = saved?.leaseRenewUs;
  if (!health) {
    // "Missing timestamp for Node …. Assuming now as a timestamp."
    health = { probeTimestamp: now, readyTransitionTimestamp: now, savedReady: currentReady, leaseRenewUs: undefined };
  } else if (!savedReady && currentReady) {
    health = { probeTimestamp: now, readyTransitionTimestamp: now, savedReady: currentReady, leaseRenewUs: health.leaseRenewUs };
  } else if (savedReady && !currentReady) {
    health = { probeTimestamp: now, readyTransitionTimestamp: now, savedReady: undefined, leaseRenewUs: health.leaseRenewUs };
  } else if (savedReady && currentReady && savedReady.lastHeartbeatTime !== currentReady.lastHeartbeatTime) {
    const transition = savedReady.lastTransitionTime !== currentReady.lastTransitionTime ? now : health.readyTransitionTimestamp;
    health = { probeTimestamp: now, readyTransitionTimestamp: transition, savedReady: currentReady, leaseRenewUs: health.leaseRenewUs };
  }
  // Always update the probe time if the node lease is renewed.
  if (leaseRenewUs !== undefined && (savedLease === undefined || savedLease < leaseRenewUs)) {
    health.leaseRenewUs = leaseRenewUs;
    health.probeTimestamp = now;
  }
  if (!(now > health.probeTimestamp + gracePeriodUs)) return { gracePeriodUs, observed, current: currentReady, health, update: undefined };

  const ts = format(now);
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  for (const type of UNKNOWN_CONDITION_TYPES) {
    const c = conditions.find((x) => x.type === type);
    if (!c) {
      conditions.push({ type, status: 'Unknown', reason: NODE_STATUS_NEVER_UPDATED_REASON, message: NODE_STATUS_NEVER_UPDATED_MESSAGE, lastHeartbeatTime: node.metadata.creationTimestamp, lastTransitionTime: ts });
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = NODE_STATUS_UNKNOWN_REASON;
      c.message = NODE_STATUS_UNKNOWN_MESSAGE;
      c.lastTransitionTime = ts;
    }
  }
  const current = getCondition(conditions, 'Ready')!;
  if (conditionsEqual(current, observed)) return { gracePeriodUs, observed, current, health, update: undefined };
  return { gracePeriodUs, observed, current, health, update: { ...node, status: { ...node.status, conditions } } };
}

function conditionsEqual(a: NodeCondition, b: NodeCondition): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    (a.lastHeartbeatTime ?? '') === (b.lastHeartbeatTime ?? '') &&
    (a.lastTransitionTime ?? '') === (b.lastTransitionTime ?? '')
  );
}

export type ZoneState = 'Initial' | 'Normal' | 'FullDisruption' | 'PartialDisruption';

/** `ComputeZoneState`: [notReady count, state] from the zone's current Ready conditions. */
export function computeZoneState(readyConditions: readonly (NodeCondition | undefined)[], unhealthyZoneThreshold: number): [number, ZoneState] {
  let ready = 0;
  let notReady = 0;
  for (const c of readyConditions) {
    if (c && c.status === 'True') ready++;
    else notReady++;
  }
  if (ready === 0 && notReady > 0) return [notReady, 'FullDisruption'];
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyZoneThreshold) return [notReady, 'PartialDisruption'];
  return [notReady, 'Normal'];
}

/** `setLimiterInZone`: the zone's tainting QPS in `state` (`ReducedQPSFunc`, `HealthyQPSFunc`). */
export function zoneEvictionQPS(state: ZoneState, zoneSize: number, cfg: NodeLifecycleConfig): number | undefined {
  switch (state) {
    case 'Normal':
      return cfg.evictionLimiterQPS;
    case 'PartialDisruption':
      return zoneSize > cfg.largeClusterThreshold ? cfg.secondaryEvictionLimiterQPS : 0;
    case 'FullDisruption':
      return cfg.evictionLimiterQPS;
    default:
      return undefined;
  }
}

/** `GetZoneKey` of the node's labels (@podsim/api `zoneKey`: the beta label first, then the GA one). */
export function getZoneKey(node: Node): string {
  return zoneKey(node.metadata.labels);
}

/** `taintutils.TaintExists` (key and effect match). */
export function taintExists(taints: readonly Taint[] | undefined, t: Taint): boolean {
  return (taints ?? []).some((x) => x.key === t.key && x.effect === t.effect);
}

/**
 * `doNoScheduleTaintingPass`'s diff: the condition taints the node should carry (NoSchedule) and
 * those it carries, as [toAdd, toRemove]; both empty when nothing is to be done.
 */
export function noScheduleTaintDiff(node: Node): [Taint[], Taint[]] {
  const want: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = CONDITION_TAINTS[c.type]?.[c.status];
    if (key) want.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) want.push({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' });
  const have = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && (t.key === TAINT_NODE_UNSCHEDULABLE || CONDITION_TAINT_KEYS.has(t.key)));
  const toAdd = want.filter((w) => !have.some((h) => h.key === w.key && h.effect === w.effect));
  const toRemove = have.filter((h) => !want.some((w) => h.key === w.key && h.effect === w.effect));
  return [toAdd, toRemove];
}

/**
 * `SwapNodeControllerTaint`'s result on a taint list: `add` (with `timeAdded`) replacing any
 * taint of the same key and effect, then every taint matching one of `remove` dropped. Returns
 * undefined when the list would not change (`AddOrUpdateTaint` / `RemoveTaint` report no update).
 */
export function swapTaints(taints: readonly Taint[] | undefined, add: readonly Taint[], remove: readonly Taint[], timeAdded: string): Taint[] | undefined {
  let out = [...(taints ?? [])];
  let changed = false;
  for (const a of add) {
    const i = out.findIndex((t) => t.key === a.key && t.effect === a.effect);
    if (i >= 0 && (out[i].value ?? '') === (a.value ?? '')) continue;
    const nt: Taint = { ...a, timeAdded };
    if (i >= 0) out[i] = nt;
    else out.push(nt);
    changed = true;
  }
  const before = out.length;
  out = out.filter((t) => !remove.some((r) => r.key === t.key && r.effect === t.effect));
  if (out.length !== before) changed = true;
  return changed ? out : undefined;
}

/** `getNoExecuteTaints`. */
export function noExecuteTaints(taints: readonly Taint[] | undefined): Taint[] {
  return (taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/** `isNodeExcludedFromDisruptionChecks`. */
export function excludedFromDisruption(node: Node): boolean {
  return (node.metadata.labels ?? {})[LABEL_NODE_EXCLUDE_DISRUPTION] !== undefined;
}

/** The lease renewTime in µs, if any. */
export function leaseRenewTime(lease: Lease | undefined, parse: (ts: string) => number | undefined): number | undefined {
  const t = lease?.spec?.renewTime;
  return t ? parse(t) : undefined;
}
