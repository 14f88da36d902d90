/**
 * Node taints as the scheduler sees them: `spec.taints` plus the NoSchedule taint that
 * TaintNodesByCondition (node lifecycle controller) puts on a node that is not Ready
 * (`node.kubernetes.io/not-ready` for Ready=False, `unreachable` for Unknown or no condition).
 */
import type { Node, Taint } from '@podsim/api';

export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';

/** The node's Ready condition status ('True' | 'False' | 'Unknown'), undefined when absent. */
export function nodeReadyStatus(node: Node): string | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

/** Node taints plus the NoSchedule taint the node lifecycle controller would add for readiness. */
export function effectiveTaints(node: Node, requireReady: boolean): Taint[] {
  const taints = [...(node.spec?.taints ?? [])];
  if (requireReady) {
    const ready = nodeReadyStatus(node);
    if (ready !== 'True') {
      const key = ready === 'False' ? TAINT_NODE_NOT_READY : TAINT_NODE_UNREACHABLE;
      if (!taints.some((t) => t.key === key && t.effect === 'NoSchedule')) taints.push({ key, effect: 'NoSchedule' });
    }
  }
  return taints;
}
