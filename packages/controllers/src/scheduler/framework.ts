/**
 * The default plugins podsim runs (`pkg/scheduler/framework/plugins`, v1.22), in filter order:
 * NodeUnschedulable, TaintToleration (with the readiness taints of taints.ts), NodeAffinity
 * (nodeSelector and required node-affinity terms), NodeResourcesFit; the first failing plugin gives the node's reasons. Score:
 * LeastAllocated (cpu, memory; pod count when neither is reported); `FitError.Error()` text.
 */
import type { Pod, Taint, Toleration } from '@podsim/api';
import type { NodeInfo, PodResources } from './nodeInfo.js';
import { podMatchesNodeSelectorAndAffinityTerms } from '../daemon/daemonUtil.js';

export { effectiveTaints, nodeReadyStatus, TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from './taints.js';
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const ERR_REASON_NODE_SELECTOR = "node(s) didn't match Pod's node affinity/selector";
export const MAX_NODE_SCORE = 100;

/** `v1.Toleration.ToleratesTaint`. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

function tolerated(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

const NO_REASONS: string[] = [];

/**
 * Runs the filters on one node; returns [] when the pod fits, else the failing plugin's reasons.
 * The node's NoSchedule/NoExecute taints (readiness included) come precomputed in `info`.
 */
export function filterNode(pod: Pod, r: PodResources, info: NodeInfo): string[] {
  const node = info.node!;
  // NodeUnschedulable.
  if (node.spec?.unschedulable && !tolerated(pod.spec.tolerations, { key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' })) return [ERR_REASON_UNSCHEDULABLE];
  // TaintToleration (NoSchedule / NoExecute).
  for (const taint of info.taints) {
    if (!tolerated(pod.spec.tolerations, taint)) return [`node(s) had taint {${taint.key}: ${taint.value ?? ''}}, that the pod didn't tolerate`];
  }
  // NodeAffinity (nodeSelector).
  const sel = pod.spec.nodeSelector;
  if (sel) {
    const labels = node.metadata.labels ?? {};
    for (const [k, v] of Object.entries(sel)) if (labels[k] !== v) return [ERR_REASON_NODE_SELECTOR];
  }
  // NodeAffinity (required node-affinity terms, e.g. a daemon pod's `metadata.name In [node]`).
  if (pod.spec.affinity?.nodeAffinity && !podMatchesNodeSelectorAndAffinityTerms(pod.spec, node)) return [ERR_REASON_NODE_SELECTOR];
  // NodeResourcesFit.
  const tooMany = info.pods.size + 1 > info.allowedPods;
  const cpu = r.cpu > 0 && info.allocCpu !== undefined && r.cpu > info.allocCpu - info.requestedCpu;
  const mem = r.mem > 0 && info.allocMem !== undefined && r.mem > info.allocMem - info.requestedMem;
  if (!tooMany && !cpu && !mem) return NO_REASONS;
  const reasons: string[] = [];
  if (tooMany) reasons.push('Too many pods');
  if (r.cpu === 0 && r.mem === 0) return reasons;
  if (info.allocCpu !== undefined && r.cpu > info.allocCpu - info.requestedCpu) reasons.push('Insufficient cpu');
  if (info.allocMem !== undefined && r.mem > info.allocMem - info.requestedMem) reasons.push('Insufficient memory');
  return reasons;
}

/** `leastRequestedScore(requested, capacity)`. */
function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** NodeResourcesLeastAllocated: mean of the cpu and memory scores after adding the pod. */
export function leastAllocatedScore(r: PodResources, info: NodeInfo): number {
  let sum = 0;
  let weights = 0;
  if (info.allocCpu !== undefined) {
    sum += leastRequestedScore(info.nonzeroCpu + r.nzCpu, info.allocCpu);
    weights++;
  }
  if (info.allocMem !== undefined) {
    sum += leastRequestedScore(info.nonzeroMem + r.nzMem, info.allocMem);
    weights++;
  }
  if (weights === 0) return leastRequestedScore(info.pods.size + 1, info.allowedPods);
  return Math.floor(sum / weights);
}

/** `FitError.Error()`: "0/N nodes are available: 2 Insufficient cpu, 1 Too many pods." */
export function fitErrorMessage(numAllNodes: number, nodeReasons: ReadonlyMap<string, readonly string[]>): string {
  const counts = new Map<string, number>();
  for (const rs of nodeReasons.values()) for (const r of rs) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  return `0/${numAllNodes} nodes are available: ${parts.join(', ')}.`;
}

/** `ErrNoNodesAvailable`. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

/** `DefaultPercentageOfNodesToScore` and the floors of `numFeasibleNodesToFind`. */
export const DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 50;
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/** `numFeasibleNodesToFind`: how many feasible nodes to look for before scoring (adaptive when 0). */
export function numFeasibleNodesToFind(numAllNodes: number, percentageOfNodesToScore: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND || percentageOfNodesToScore >= 100) return numAllNodes;
  let adaptive = percentageOfNodesToScore;
  if (adaptive <= 0) {
    adaptive = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE - Math.floor(numAllNodes / 125);
    if (adaptive < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND) adaptive = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
  }
  const n = Math.floor((numAllNodes * adaptive) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}
